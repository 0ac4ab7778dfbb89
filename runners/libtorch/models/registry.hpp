#pragma once
// The models the worker can run, by name: a builder for each model of
// schemas/models.json, whose descriptions, knobs and defaults it takes, and
// the user's TorchScript files (torchscript:FILE, models/torchscript.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

struct ModelInfo {
  std::string name;
  std::string description;
  std::vector<std::string> knobs;  // job fields the model reads, e.g. {"input_size", "num_classes"}
  ModelConfig defaults;
  std::function<Model(const ModelConfig&)> build;
};

// A job field that sizes a model, and where ModelConfig keeps it.
struct ModelKnob {
  const char* name;
  int64_t ModelConfig::*field;
};
const std::vector<ModelKnob>& model_knobs();

// The built-in models.
const std::vector<ModelInfo>& models();
// A built-in model, or torchscript:FILE's file under `model_root` (the
// job's). Throws ts::InvalidInput("model", ...) listing the known names, or
// naming the file that is not there.
ModelInfo find_model(std::string_view name, const std::string& model_root = {});

}  // namespace ts::worker
