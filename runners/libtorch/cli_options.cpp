#include "runners/libtorch/cli_options.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <optional>

#include "shared/errors.hpp"
#include "shared/json_io.hpp"

namespace ts::worker {
namespace {

enum class Kind { text, integer, number };

struct JobFlag {
  const char* flag;
  const char* field;
  Kind kind;
  const char* help;
};

// Each one-off flag sets the job field of the same meaning (docs/worker.md).
constexpr JobFlag job_flags[] = {
    {"--model", "model", Kind::text, "model name (see --list-models)"},
    {"--batch-size", "batch_size", Kind::integer, "samples per step"},
    {"--task", "task", Kind::text, "train | infer (default train)"},
    {"--mode", "mode", Kind::text, "eager | compiled (default eager)"},
    {"--fallback", "fallback", Kind::text, "none | eager: what compiled mode does when capture fails"},
    {"--precision", "precision", Kind::text, "fp32 | bf16 | fp16 (default fp32)"},
    {"--epochs", "epochs", Kind::integer, "timed epochs (default 5)"},
    {"--warmup", "warmup", Kind::integer, "warm-up iterations (default 10)"},
    {"--iters", "iters", Kind::integer, "iterations per epoch (default: as the job resolves, docs/worker.md)"},
    {"--dataset-size", "dataset_size", Kind::integer, "samples per epoch when --iters is not given (default 50000)"},
    {"--data-batches", "data_batches", Kind::integer, "distinct synthetic batches cycled (default 4)"},
    {"--input-size", "input_size", Kind::integer, "image side (resnet*) or input features (mlp)"},
    {"--num-classes", "num_classes", Kind::integer, "classes of the classifier head"},
    {"--width", "width", Kind::integer, "hidden width (mlp) or model width (transformer, gpt)"},
    {"--depth", "depth", Kind::integer, "hidden layers (mlp) or blocks (transformer, gpt)"},
    {"--heads", "heads", Kind::integer, "attention heads (transformer, gpt)"},
    {"--seq-len", "seq_len", Kind::integer, "sequence length (transformer), tokens a sample (gpt)"},
    {"--vocab", "vocab", Kind::integer, "vocabulary (gpt)"},
    {"--device", "device", Kind::text, "cpu | cuda | cuda:N (default cpu)"},
    {"--threads", "threads", Kind::integer, "intra-op threads; 0 = cores available (default)"},
    {"--interop-threads", "interop_threads", Kind::integer, "inter-op threads; 0 = LibTorch default"},
    {"--seed", "seed", Kind::integer, "seed of weights and data (default 0)"},
    {"--optimizer", "optimizer", Kind::text, "sgd | adamw (default sgd)"},
    {"--lr", "lr", Kind::number, "learning rate (default 0.01)"},
    {"--job-id", "job_id", Kind::text, "identity recorded in the result"},
};

nlohmann::json convert(const JobFlag& flag, const std::string& value) {
  if (flag.kind == Kind::text) return value;
  if (flag.kind == Kind::integer) {
    int64_t number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size()) {
      throw InvalidInput(flag.field, std::string("expected an integer for ") + flag.flag + ", got '" + value + "'");
    }
    return number;
  }
  try {
    std::size_t used = 0;
    const double number = std::stod(value, &used);
    if (used == value.size()) return number;
  } catch (const std::exception&) {
  }
  throw InvalidInput(flag.field, std::string("expected a number for ") + flag.flag + ", got '" + value + "'");
}

}  // namespace

WorkerCommand parse_command_line(int argc, char** argv) {
  CLI::App app{
      "torchsweep-worker: runs one PyTorch benchmark job (LibTorch) and writes its result document.\n"
      "Exit codes: 0 ok, 1 internal error, 2 invalid job or arguments (no result written),\n"
      "3 the job ran and failed or is unsupported here (result written with the reason)."};
  WorkerCommand command;
  std::optional<std::string> job_path;
  bool list_models = false, show_version = false, probe_peak = false;
  app.add_option("--job", job_path, "job document (JSON file, or - for stdin); flags override its fields");
  app.add_option("--out", command.out, "where to write the result document (file, or - for stdout)")
      ->capture_default_str();
  app.add_option("--log-level", command.log_level, "debug | info | warn | error | off")->capture_default_str();
  app.add_flag("--list-models", list_models, "print the registered models with their parameter counts");
  app.add_flag("--version", show_version, "print the torchsweep version and commit");
  app.add_flag("--probe-peak", probe_peak,
               "measure this node's peak matmul FLOP/s (fp32, bf16; CPU and each GPU) and write it to --out");
  app.add_option("--write-initial-weights", command.initial_weights_out,
                 "write the job's initial weights (safetensors, PyTorch names and layouts) to FILE and exit");
  app.add_option("--write-reference-batch", command.reference_batch_out,
                 "write the job's reference batch (safetensors: inputs, targets) to FILE and exit");
  std::vector<std::optional<std::string>> values(std::size(job_flags));
  for (std::size_t i = 0; i < std::size(job_flags); ++i) {
    app.add_option(job_flags[i].flag, values[i], job_flags[i].help)->group("Job fields (one-off runs)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    command.exit_now = code == 0 ? exit_code::ok : exit_code::invalid_input;
    return command;
  }

  if (list_models) command.action = WorkerCommand::Action::list_models;
  if (show_version) command.action = WorkerCommand::Action::show_version;
  if (probe_peak) command.action = WorkerCommand::Action::probe_peak;
  if (command.initial_weights_out || command.reference_batch_out) command.action = WorkerCommand::Action::write_start;
  command.job = job_path ? json_io::read(*job_path) : nlohmann::json{{"schema_version", 1}};
  if (!command.job.is_object()) throw InvalidInput("", "the job document must be a JSON object");
  for (std::size_t i = 0; i < std::size(job_flags); ++i) {
    if (values[i]) command.job[job_flags[i].field] = convert(job_flags[i], *values[i]);
  }
  return command;
}

}  // namespace ts::worker
