#pragma once
// The export writers that run in the analysts' venvs (torchsweep-parquet,
// torchsweep-mlflow), beside this binary: the export hands them its rows as
// one JSON file, which is removed however the export ends.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::cli {

// Runs `program` (found beside this binary) with `arguments` and "--input
// FILE", FILE holding `input` and placed in `folder`. Exit 2 is the
// writer's refusal of its target: ts::InvalidInput naming `target_option`.
// Any other failure (missing program, another exit code) throws
// std::runtime_error. The writer's own message is on stderr by then.
void run_writer(const std::string& program, const nlohmann::json& input, const std::filesystem::path& folder,
                const std::vector<std::string>& arguments, const std::string& target_option);

}  // namespace ts::cli
