#include "agent/worker/models/registry.hpp"

#include "agent/worker/models/mlp.hpp"
#include "agent/worker/models/resnet.hpp"
#include "agent/worker/models/transformer.hpp"
#include "shared/errors.hpp"

namespace ts::worker {

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> all{
      {"resnet18",
       "ResNet-18 as torchvision defines it (basic blocks 2-2-2-2)",
       {"input_size", "num_classes"},
       ModelConfig{.input_size = 224, .num_classes = 1000},
       [](const ModelConfig& c) { return build_resnet(ResNetDepth::resnet18, c); }},
      {"resnet50",
       "ResNet-50 as torchvision defines it (bottlenecks 3-4-6-3, stride on the 3x3)",
       {"input_size", "num_classes"},
       ModelConfig{.input_size = 224, .num_classes = 1000},
       [](const ModelConfig& c) { return build_resnet(ResNetDepth::resnet50, c); }},
      {"mlp",
       "multilayer perceptron: depth hidden Linear+GELU layers of the given width",
       {"input_size", "num_classes", "width", "depth"},
       ModelConfig{.input_size = 784, .num_classes = 10, .width = 1024, .depth = 3},
       build_mlp},
      {"transformer",
       "pre-norm Transformer encoder (attention + GELU MLP) over seq_len x width features",
       {"num_classes", "width", "depth", "heads", "seq_len"},
       ModelConfig{.num_classes = 1000, .width = 256, .depth = 4, .heads = 4, .seq_len = 128},
       build_transformer},
  };
  return all;
}

const ModelInfo& find_model(std::string_view name) {
  std::string known;
  for (const auto& info : models()) {
    if (info.name == name) return info;
    known += (known.empty() ? "" : ", ") + info.name;
  }
  throw InvalidInput("model", "unknown model '" + std::string(name) + "'; known models: " + known);
}

}  // namespace ts::worker
