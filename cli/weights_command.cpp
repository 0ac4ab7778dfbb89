// torchsweep weights: a model's initial weights as a file any runner can
// start from (the job field initial_weights; docs/frameworks.md, "The same
// starting point"), written at the job's seed by the runner that builds the
// model: the LibTorch worker for the built-in models, the torch.compile
// runner for a library's (hf:, timm:, torchvision:) and the user's own,
// under the names the library gives them.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/key_value.hpp"
#include "cli/python_writer.hpp"
#include "shared/errors.hpp"
#include "shared/job_resolution.hpp"
#include "shared/models/catalogue.hpp"

namespace ts::cli {

Command add_weights_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "weights",
      "write a model's initial weights (at a seed, with the job's knobs) as a safetensors file that any "
      "runner running the model starts from (the job field initial_weights)");
  struct Settings {
    std::string model, out, python;
    std::optional<int64_t> seed;
    std::vector<std::string> fields;
  };
  auto settings = std::make_shared<Settings>();
  command
      ->add_option("model", settings->model,
                   "the model, as a job names it (resnet50, hf:gpt2, timm:vit_tiny_patch16_224)")
      ->required();
  command->add_option("out", settings->out, "the safetensors file to write")->required();
  command->add_option("--seed", settings->seed, "the seed the weights are drawn from (default: the job's)");
  command->add_option("--set", settings->fields,
                      "KEY=VALUE: a job field, a knob above all (width=64, vocab=1000, model_root=DIR); the value is "
                      "read as JSON where it parses, else as a string (repeatable)");
  command->add_option("--python", settings->python,
                      "the interpreter of the torch.compile runner for a library's or the user's model: an "
                      "environment's, whose library builds it (default: the runner's own)");
  return [settings] {
    nlohmann::json job{{"schema_version", 1}, {"model", settings->model}, {"batch_size", 1}};
    if (settings->seed) job["seed"] = *settings->seed;
    for (const auto& text : settings->fields) add_job_field(job, text, "--set");
    // The built-in models' weights are PyTorch's names as the worker gives them, the same in every runner.
    const bool library = models::library_of(settings->model) != nullptr;
    const std::string runner = library ? "torch-compile" : "libtorch";
    const auto resolved = job_resolution::resolve(job, {runner, job_resolution::cores_available()});
    const auto out = std::filesystem::absolute(settings->out);
    run_writer(library ? "torchsweep-torch-compile" : "torchsweep-worker", resolved, out.parent_path(),
               {"--write-initial-weights", out.string()}, "model", "--job", library ? settings->python : "");
    std::cout << "wrote the initial weights of " << settings->model << " (seed " << resolved.at("seed") << ", "
              << runner << ") to " << out.string() << "\n";
    return exit_code::ok;
  };
}

}  // namespace ts::cli
