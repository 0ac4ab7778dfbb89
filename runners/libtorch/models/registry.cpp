#include "runners/libtorch/models/registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "runners/libtorch/models/gpt.hpp"
#include "runners/libtorch/models/mlp.hpp"
#include "runners/libtorch/models/resnet.hpp"
#include "runners/libtorch/models/torchscript.hpp"
#include "runners/libtorch/models/transformer.hpp"
#include "shared/models/catalogue.hpp"

namespace ts::worker {

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

const std::vector<ModelKnob>& model_knobs() {
  static const std::vector<ModelKnob> knobs{
      {"input_size", &ModelConfig::input_size}, {"num_classes", &ModelConfig::num_classes},
      {"width", &ModelConfig::width},           {"depth", &ModelConfig::depth},
      {"heads", &ModelConfig::heads},           {"seq_len", &ModelConfig::seq_len},
      {"vocab", &ModelConfig::vocab},
  };
  return knobs;
}

namespace {

// A model's info: its knobs and their defaults as a catalogue spells them.
ModelInfo info_of(const models::ModelSpec& spec, std::string name, std::function<Model(const ModelConfig&)> build) {
  ModelInfo info{std::move(name), spec.description, {}, {}, std::move(build)};
  for (const auto& [knob, value] : spec.defaults) {
    const auto& knobs = model_knobs();
    const auto field = std::find_if(knobs.begin(), knobs.end(), [&](const ModelKnob& k) { return k.name == knob; });
    if (field == knobs.end()) throw std::logic_error("unknown knob '" + knob + "' for model " + info.name);
    info.knobs.push_back(knob);
    info.defaults.*field->field = value;
  }
  return info;
}

}  // namespace

const std::vector<ModelInfo>& models() {
  static const auto all = [] {
    const std::map<std::string, std::function<Model(const ModelConfig&)>> builders{
        {"resnet18", [](const ModelConfig& c) { return build_resnet(ResNetDepth::resnet18, c); }},
        {"resnet50", [](const ModelConfig& c) { return build_resnet(ResNetDepth::resnet50, c); }},
        {"mlp", build_mlp},
        {"transformer", build_transformer},
        {"gpt", build_gpt},
    };
    std::vector<ModelInfo> infos;
    for (const auto& spec : models::catalogue()) {
      const auto builder = builders.find(spec.name);
      if (builder == builders.end())
        throw std::logic_error("schemas/models.json names '" + spec.name + "', which the worker cannot build");
      infos.push_back(info_of(spec, spec.name, builder->second));
    }
    return infos;
  }();
  return all;
}

ModelInfo find_model(std::string_view name, const std::string& model_root) {
  if (name.starts_with("torchscript:")) {
    const auto& library = *models::library_of(name);  // refuses a NAME leaving the roots
    const auto file = torchscript_file(std::string(name), model_root);
    return info_of(library, std::string(name),
                   [file](const ModelConfig& config) { return load_torchscript(file, config); });
  }
  const auto& spec = models::find(name);  // the error listing the known names
  // models() holds one entry for each model of the catalogue.
  return *std::find_if(models().begin(), models().end(), [&](const ModelInfo& info) { return info.name == spec.name; });
}

}  // namespace ts::worker
