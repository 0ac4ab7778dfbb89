#pragma once
// How the report names a configuration on the page.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::readers {

// "resnet18 train bs16 fp32 eager 1 rank libtorch (CPU model)": the row's
// values of `axes` in order, those it lacks left out.
std::string label_of(const nlohmann::json& row, const std::vector<std::string>& axes);

// The configuration axes (readers/vocabulary.hpp) less `axis`: a label of
// configurations that differ along it (the mode of a speedup, say).
std::vector<std::string> configuration_axes_without(const std::string& axis);

}  // namespace ts::readers
