#include "runners/libtorch/models/mlp.hpp"

namespace ts::worker {

MlpImpl::MlpImpl(int64_t input_size, int64_t width, int64_t depth, int64_t num_classes)
    : hidden(register_module("hidden", torch::nn::ModuleList())) {
  // Hidden layers first, then the head, as the Python runners build it: the
  // seeded generator then hands both the same initial weights.
  for (int64_t i = 0; i < depth; ++i) hidden->push_back(torch::nn::Linear(i == 0 ? input_size : width, width));
  head = register_module("head", torch::nn::Linear(width, num_classes));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  auto h = x;
  for (const auto& layer : *hidden) h = torch::gelu(layer->as<torch::nn::Linear>()->forward(h));
  return head(h);
}

Model build_mlp(const ModelConfig& config) {
  Mlp net(config.input_size, config.width, config.depth, config.num_classes);
  return Model{net.ptr(),
               [net](const torch::Tensor& x) mutable { return net->forward(x); },
               {config.input_size},
               config.num_classes};
}

}  // namespace ts::worker
