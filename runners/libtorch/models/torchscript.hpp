#pragma once
// torchscript:FILE (docs/models.md): the user's own model, a module saved
// with torch.jit.save, as the worker runs a model: its parameters trained
// by the worker's optimizer, its forward traced in compiled mode.
#include <filesystem>
#include <string>

#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

// FILE of torchscript:FILE under `model_root` (the agent's --model-path
// directory it was found under), resolved and checked again to lie under
// it. Throws ts::InvalidInput("model_root" or "model").
std::filesystem::path torchscript_file(const std::string& model, const std::string& model_root);

// The module in `file`, fed float batches [N, *input_shape] (its
// input_shape attribute, else images at config.input_size) and trained with
// cross-entropy over its outputs' last dimension. A file that does not load
// throws std::runtime_error with the error's first lines.
Model load_torchscript(const std::filesystem::path& file, const ModelConfig& config);

}  // namespace ts::worker
