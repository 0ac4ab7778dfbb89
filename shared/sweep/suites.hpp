#pragma once
// Suites (schemas/suites/NAME.json; docs/models.md): a named list of models,
// as PyTorch's compiler dashboard runs TorchBench, TIMM and Hugging Face
// sets. In a sweep, `model: {suite: NAME}`, as an axis value or the fixed
// model, stands for the suite's models; the suite's `fixed` fields apply
// where the sweep's `fixed` does not set them.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::sweep {

// The suites the build carries, by name.
std::vector<std::string> suite_names();

// `spec` with every {suite: NAME} of `axes.model` and `fixed.model` replaced
// by the suite's models (in the suite's order, each once, other values kept
// where they stand) and the suites' fixed fields added. Throws
// ts::InvalidInput naming the field for a suite that does not exist (with
// those that do) or a model that is both fixed and an axis.
nlohmann::json with_suites(const nlohmann::json& spec, const std::string& origin);

}  // namespace ts::sweep
