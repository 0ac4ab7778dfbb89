#pragma once
// torchsweep-worker's command line: a job file (or stdin) and/or one-off
// flags that set or override job fields.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ts::worker {

struct WorkerCommand {
  enum class Action { run, list_models, show_version, probe_peak, write_start } action = Action::run;
  // write_start: the job's initial weights and/or reference batch (safetensors).
  std::optional<std::string> initial_weights_out, reference_batch_out;
  nlohmann::json job;  // the job document to validate and run
  std::string out = "-";
  std::string log_level = "info";
  // Set when the program should exit at once (after --help, or a malformed
  // command line that CLI11 already reported).
  std::optional<int> exit_now;
};

// Throws ts::InvalidInput for a flag value of the wrong type or a job file
// that cannot be read.
WorkerCommand parse_command_line(int argc, char** argv);

}  // namespace ts::worker
