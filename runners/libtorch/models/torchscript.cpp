#include "runners/libtorch/models/torchscript.hpp"

#include <torch/script.h>

#include <sstream>

#include "shared/errors.hpp"
#include "shared/lies_under.hpp"

namespace ts::worker {
namespace {

namespace fs = std::filesystem;

// The scripted module's parameters and buffers registered as this
// module's (the same tensors), so the optimizer, device moves, the
// collectives and the parameter counts see them as any model's.
struct ScriptedModule : torch::nn::Module {
  explicit ScriptedModule(torch::jit::Module module) : scripted(std::move(module)) {
    // "." may not appear in a registered name; the names are only labels here.
    const auto label = [](std::string name) {
      for (auto& c : name) c = c == '.' ? '_' : c;
      return name;
    };
    for (const auto& parameter : scripted.named_parameters()) {
      register_parameter(label(parameter.name), parameter.value, parameter.value.requires_grad());
    }
    for (const auto& buffer : scripted.named_buffers()) register_buffer(label(buffer.name), buffer.value);
  }
  void train(bool on) override {
    torch::nn::Module::train(on);
    scripted.train(on);
  }
  using torch::nn::Module::to;
  void to(torch::Device device, bool non_blocking) override {
    torch::nn::Module::to(device, non_blocking);
    scripted.to(device, non_blocking);  // tensors it holds beside parameters and buffers
  }

  torch::jit::Module scripted;
};

std::string first_lines(const std::string& text, int lines) {
  std::istringstream in(text);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace

fs::path torchscript_file(const std::string& model, const std::string& model_root) {
  if (model_root.empty()) {
    throw InvalidInput("model_root", "model " + model +
                                         " is looked up under a --model-path directory, which the agent sets as "
                                         "model_root; this job has none");
  }
  std::error_code error;
  const auto root = fs::weakly_canonical(model_root, error);
  const auto name = model.substr(model.find(':') + 1);
  const auto file = fs::weakly_canonical(root / name, error);
  if (error || !lies_under(file, root)) {
    throw InvalidInput("model", "'" + model + "': " + name + " lies outside the model root " + root.string());
  }
  if (!fs::is_regular_file(file, error)) {
    throw InvalidInput("model", "'" + model + "': no file " + name + " under the model root " + root.string());
  }
  return file;
}

Model load_torchscript(const fs::path& file, const ModelConfig& config) {
  torch::jit::Module scripted;
  try {
    scripted = torch::jit::load(file.string(), torch::kCPU);
  } catch (const c10::Error& error) {
    throw std::runtime_error(file.string() + " does not load: " + first_lines(error.what_without_backtrace(), 5));
  }
  Model model;
  if (scripted.hasattr("input_shape")) {
    for (const auto size : scripted.attr("input_shape").toIntList()) model.sample_shape.push_back(size);
  } else {
    model.sample_shape = {3, config.input_size, config.input_size};
  }
  {
    torch::NoGradGuard no_grad;
    scripted.eval();
    std::vector<int64_t> one{1};
    one.insert(one.end(), model.sample_shape.begin(), model.sample_shape.end());
    model.num_classes = scripted.forward({torch::zeros(one)}).toTensor().size(-1);
  }
  auto module = std::make_shared<ScriptedModule>(scripted);
  model.forward = [module](const torch::Tensor& input) { return module->scripted.forward({input}).toTensor(); };
  model.module = std::move(module);
  return model;
}

}  // namespace ts::worker
