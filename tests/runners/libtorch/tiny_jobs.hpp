#pragma once
// Job documents with shapes small enough for the test suite on 2 cores.
#include <nlohmann/json.hpp>

namespace ts::worker::testing {

inline nlohmann::json tiny_mlp() {
  return {{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 8}, {"input_size", 16}, {"width", 32}, {"depth", 2},
          {"num_classes", 4},    {"epochs", 2},    {"warmup", 3},     {"iters", 4},       {"lr", 0.05}};
}

inline nlohmann::json tiny_transformer() {
  return {
      {"schema_version", 1}, {"model", "transformer"}, {"batch_size", 4}, {"seq_len", 8}, {"width", 32}, {"depth", 2},
      {"heads", 4},          {"num_classes", 10},      {"epochs", 2},     {"warmup", 3},  {"iters", 3}};
}

inline nlohmann::json tiny_resnet18() {
  return {{"schema_version", 1}, {"model", "resnet18"}, {"batch_size", 4}, {"input_size", 32},
          {"num_classes", 10},   {"epochs", 2},         {"warmup", 3},     {"iters", 2}};
}

}  // namespace ts::worker::testing
