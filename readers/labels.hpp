#pragma once
// How the report names a configuration on the page.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::readers {

// "resnet18 train bs16 fp32 eager 1 rank libtorch (CPU model)": the row's
// values of `axes` in order, those it lacks left out.
std::string label_of(const nlohmann::json& row, const std::vector<std::string>& axes);

}  // namespace ts::readers
