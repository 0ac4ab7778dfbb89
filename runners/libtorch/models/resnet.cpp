#include "runners/libtorch/models/resnet.hpp"

#include <array>

namespace ts::worker {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

template <class Block>
nn::Sequential make_layer(int64_t& inplanes, int64_t planes, int64_t blocks, int64_t stride) {
  nn::Sequential downsample{nullptr};
  if (stride != 1 || inplanes != planes * Block::Impl::expansion) {
    downsample = nn::Sequential(conv1x1(inplanes, planes * Block::Impl::expansion, stride),
                                nn::BatchNorm2d(planes * Block::Impl::expansion));
  }
  nn::Sequential layer;
  layer->push_back(Block(inplanes, planes, stride, downsample));
  inplanes = planes * Block::Impl::expansion;
  for (int64_t i = 1; i < blocks; ++i) layer->push_back(Block(inplanes, planes, 1, nn::Sequential{nullptr}));
  return layer;
}

torch::Tensor add_identity(const torch::Tensor& out, const torch::Tensor& x, nn::Sequential& downsample) {
  return torch::relu(out + (downsample.is_empty() ? x : downsample->forward(x)));
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential ds)
    : conv1(register_module("conv1", conv3x3(inplanes, planes, stride))),
      conv2(register_module("conv2", conv3x3(planes, planes, 1))),
      bn1(register_module("bn1", nn::BatchNorm2d(planes))),
      bn2(register_module("bn2", nn::BatchNorm2d(planes))) {
  if (!ds.is_empty()) downsample = register_module("downsample", ds);
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto out = torch::relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  return add_identity(out, x, downsample);
}

BottleneckImpl::BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential ds)
    : conv1(register_module("conv1", conv1x1(inplanes, planes))),
      conv2(register_module("conv2", conv3x3(planes, planes, stride))),
      conv3(register_module("conv3", conv1x1(planes, planes * expansion))),
      bn1(register_module("bn1", nn::BatchNorm2d(planes))),
      bn2(register_module("bn2", nn::BatchNorm2d(planes))),
      bn3(register_module("bn3", nn::BatchNorm2d(planes * expansion))) {
  if (!ds.is_empty()) downsample = register_module("downsample", ds);
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  auto out = torch::relu(bn1(conv1(x)));
  out = torch::relu(bn2(conv2(out)));
  out = bn3(conv3(out));
  return add_identity(out, x, downsample);
}

ResNetImpl::ResNetImpl(ResNetDepth depth, int64_t num_classes) {
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t inplanes = 64;
  int64_t expansion = 1;
  auto build_layers = [&]<class Block>(std::array<int64_t, 4> blocks) {
    layer1 = register_module("layer1", make_layer<Block>(inplanes, 64, blocks[0], 1));
    layer2 = register_module("layer2", make_layer<Block>(inplanes, 128, blocks[1], 2));
    layer3 = register_module("layer3", make_layer<Block>(inplanes, 256, blocks[2], 2));
    layer4 = register_module("layer4", make_layer<Block>(inplanes, 512, blocks[3], 2));
    expansion = Block::Impl::expansion;
  };
  if (depth == ResNetDepth::resnet18) {
    build_layers.operator()<BasicBlock>({2, 2, 2, 2});
  } else {
    build_layers.operator()<Bottleneck>({3, 4, 6, 3});
  }
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(512 * expansion, num_classes));

  // torchvision's initialisation: He-normal (fan_out) convs, BatchNorm to identity.
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* conv = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = module->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

torch::Tensor ResNetImpl::forward(const torch::Tensor& x) {
  auto out = maxpool(torch::relu(bn1(conv1(x))));
  out = layer4->forward(layer3->forward(layer2->forward(layer1->forward(out))));
  return fc(torch::flatten(avgpool(out), 1));
}

Model build_resnet(ResNetDepth depth, const ModelConfig& config) {
  ResNet net(depth, config.num_classes);
  return Model{net.ptr(),
               [net](const torch::Tensor& x) mutable { return net->forward(x); },
               {3, config.input_size, config.input_size},
               config.num_classes};
}

}  // namespace ts::worker
