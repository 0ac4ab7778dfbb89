#pragma once
// The models the worker can run, by name: a builder for each model of
// schemas/models.json, whose descriptions, knobs and defaults it takes.
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

const std::vector<ModelInfo>& models();
// Throws ts::InvalidInput("model", ...) listing the known names.
const ModelInfo& find_model(std::string_view name);

}  // namespace ts::worker
