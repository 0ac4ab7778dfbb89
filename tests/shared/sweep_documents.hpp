#pragma once
// Sweep documents the sweep tests share (sweep_test.cpp, runnable_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "shared/errors.hpp"
#include "shared/sweep/sweep.hpp"

namespace ts::sweep::testing {

// Two models, three batch sizes, both modes.
inline nlohmann::json minimal() {
  return parse_yaml(R"(
name: t
axes:
  model: [mlp, resnet18]
  batch_size: [8, 16, 32]
  mode: [eager, compiled]
fixed: {epochs: 2}
)",
                    "t.yaml");
}

// The field a sweep is refused for (its message naming the file), or "<accepted>".
inline std::string refusal(const nlohmann::json& spec) {
  try {
    expand(spec, "t.yaml");
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("t.yaml: "), std::string::npos) << error.what();
    return error.field();
  }
  return "<accepted>";
}

}  // namespace ts::sweep::testing
