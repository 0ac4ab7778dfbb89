#pragma once
// ResNets structurally identical to torchvision.models.resnet18/resnet50
// (same modules, same parameter names and counts), so a torchvision
// state_dict maps onto them one to one. One deliberate difference: ReLU is
// out-of-place, because in-place ops block TorchScript fusion and the same
// model code must serve eager and compiled mode.
#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

struct BasicBlockImpl : torch::nn::Module {
  static constexpr int64_t expansion = 1;
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

// torchvision's ResNet v1.5 bottleneck: the stride sits on the 3x3 conv.
struct BottleneckImpl : torch::nn::Module {
  static constexpr int64_t expansion = 4;
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

enum class ResNetDepth { resnet18, resnet50 };

struct ResNetImpl : torch::nn::Module {
  ResNetImpl(ResNetDepth depth, int64_t num_classes);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

Model build_resnet(ResNetDepth depth, const ModelConfig& config);

}  // namespace ts::worker
