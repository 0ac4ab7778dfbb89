#pragma once
// The programs beside this binary that write a file for a command: the
// export writers in the analysts' venvs (torchsweep-parquet,
// torchsweep-mlflow), which get the export's rows, and the runners that
// write a model's initial weights (`torchsweep weights`), which get the
// job. What is handed over is one JSON file, removed however it ends.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::cli {

// Runs `program` (found beside this binary; started by `interpreter` where
// one is named) with `arguments` and "INPUT_OPTION FILE", FILE holding
// `input` and placed in `folder`. Exit 2 is the writer's refusal:
// ts::InvalidInput naming `target_option`. Any other failure (missing
// program, another exit code) throws std::runtime_error. The writer's own
// message is on stderr by then.
void run_writer(const std::string& program, const nlohmann::json& input, const std::filesystem::path& folder,
                const std::vector<std::string>& arguments, const std::string& target_option,
                const std::string& input_option = "--input", const std::string& interpreter = "");

}  // namespace ts::cli
