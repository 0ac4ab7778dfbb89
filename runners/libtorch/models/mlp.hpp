#pragma once
#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

// input_size -> [Linear(width) + GELU] x depth -> Linear(num_classes).
struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t input_size, int64_t width, int64_t depth, int64_t num_classes);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::ModuleList hidden{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Mlp);

Model build_mlp(const ModelConfig& config);

}  // namespace ts::worker
