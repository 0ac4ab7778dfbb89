#include <gtest/gtest.h>

#include <cmath>

#include "runners/libtorch/models/registry.hpp"
#include "shared/errors.hpp"

namespace ts::worker {
namespace {

int64_t parameters_of(const std::string& name, ModelConfig config) {
  return count_parameters(*find_model(name).build(config).module);
}

TEST(Models, ResNetParameterCountsMatchTorchvision) {
  EXPECT_EQ(parameters_of("resnet18", {.input_size = 224, .num_classes = 1000}), 11'689'512);
  EXPECT_EQ(parameters_of("resnet50", {.input_size = 224, .num_classes = 1000}), 25'557'032);
}

TEST(Models, ResNetParameterNamesMatchTorchvision) {
  const auto model = find_model("resnet50").build({.input_size = 224, .num_classes = 1000});
  const auto parameters = model.module->named_parameters();
  const auto buffers = model.module->named_buffers();
  for (const char* name : {"conv1.weight", "bn1.bias", "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
                           "layer4.2.bn3.bias", "fc.weight", "fc.bias"}) {
    EXPECT_TRUE(parameters.contains(name)) << name;
  }
  EXPECT_TRUE(buffers.contains("layer2.0.downsample.1.running_mean"));
  // ResNet v1.5: the stride of a downsampling bottleneck sits on the 3x3.
  EXPECT_EQ(parameters["layer2.0.conv2.weight"].sizes(), (std::vector<int64_t>{128, 128, 3, 3}));
  auto* first = model.module->named_modules()["layer2.0.conv2"]->as<torch::nn::Conv2d>();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->options.stride()->at(0), 2);
  EXPECT_EQ(model.module->named_modules()["layer2.0.conv1"]->as<torch::nn::Conv2d>()->options.stride()->at(0), 1);
}

TEST(Models, MlpAndTransformerParameterCountsFollowTheirFormulas) {
  // (16*32+32) + (32*32+32) + (32*4+4)
  EXPECT_EQ(parameters_of("mlp", {.input_size = 16, .num_classes = 4, .width = 32, .depth = 2}), 1732);
  // per block 12w^2 + 13w, plus positions s*w, final LayerNorm 2w, head w*c+c
  const int64_t w = 32, s = 8, c = 10;
  EXPECT_EQ(parameters_of("transformer", {.num_classes = c, .width = w, .depth = 2, .heads = 4, .seq_len = s}),
            2 * (12 * w * w + 13 * w) + s * w + 2 * w + w * c + c);
}

TEST(Models, GptParameterCountFollowsItsFormulaAndItsLossStartsAtTheUniformGuess) {
  // token embeddings v*w, positions s*w, causal blocks 12w^2 + 13w each, final LayerNorm 2w, head w*v (no bias)
  const int64_t v = 256, w = 64, s = 32;
  const ModelConfig config{.width = w, .depth = 2, .heads = 4, .seq_len = s, .vocab = v};
  EXPECT_EQ(parameters_of("gpt", config), v * w + s * w + 2 * (12 * w * w + 13 * w) + 2 * w + w * v);
  torch::manual_seed(0);
  auto model = find_model("gpt").build(config);
  EXPECT_TRUE(model.tokens);
  EXPECT_EQ(model.sample_shape, (std::vector<int64_t>{s}));
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(v, {3, s});
  const auto logits = model.forward(ids);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, s, v}));
  // Small initial weights: close to ln(v), every token equally likely.
  const auto loss = torch::nn::functional::cross_entropy(logits.flatten(0, 1), ids.flatten()).item<double>();
  EXPECT_NEAR(loss, std::log(static_cast<double>(v)), 0.5);
  // Causal: a change at the last position leaves every earlier position's logits as they were.
  auto changed = ids.clone();
  changed.index_put_({torch::indexing::Slice(), s - 1}, (ids.index({torch::indexing::Slice(), s - 1}) + 1) % v);
  const auto again = model.forward(changed);
  EXPECT_TRUE(torch::equal(again.narrow(1, 0, s - 1), logits.narrow(1, 0, s - 1)));
  EXPECT_FALSE(torch::equal(again.narrow(1, s - 1, 1), logits.narrow(1, s - 1, 1)));
}

TEST(Models, GptCachedDecodingGivesTheLogitsOfRecomputingTheWholeSequence) {
  const int64_t v = 256, w = 64, s = 32, prompt = 5, fresh = 4;
  torch::manual_seed(0);
  auto model = find_model("gpt").build({.width = w, .depth = 2, .heads = 4, .seq_len = s, .vocab = v});
  ASSERT_TRUE(model.forward_cached);
  model.module->eval();
  torch::NoGradGuard no_grad;
  auto sequence = torch::randint(v, {2, prompt});
  auto cache = model.make_cache(2, prompt + fresh, torch::kFloat);
  EXPECT_EQ(cache.keys.size(), 2U);
  EXPECT_EQ(cache.keys[0].sizes(), (std::vector<int64_t>{2, 4, prompt + fresh, w / 4}));
  auto logits = model.forward_cached(sequence, cache);  // the prefill
  for (int64_t step = 0; step < fresh; ++step) {
    const auto recomputed = model.forward(sequence).select(1, -1);  // no cache: every position again
    EXPECT_TRUE(torch::allclose(logits, recomputed, 1e-5, 1e-5)) << "new token " << step;
    const auto next = recomputed.argmax(-1, /*keepdim=*/true);
    sequence = torch::cat({sequence, next}, 1);
    logits = model.forward_cached(next, cache);  // one decode step
  }
  EXPECT_EQ(cache.filled, prompt + fresh);
  EXPECT_FALSE(find_model("transformer")
                   .build({.num_classes = 3, .width = w, .depth = 1, .heads = 4, .seq_len = s})
                   .forward_cached);
}

TEST(Models, OutputShapesAreBatchByClasses) {
  torch::NoGradGuard no_grad;
  struct Case {
    const char* name;
    ModelConfig config;
  };
  for (const auto& [name, config] :
       {Case{"resnet18", {.input_size = 32, .num_classes = 10}}, Case{"resnet50", {.input_size = 32, .num_classes = 7}},
        Case{"mlp", {.input_size = 16, .num_classes = 4, .width = 8, .depth = 1}},
        Case{"transformer", {.num_classes = 5, .width = 16, .depth = 1, .heads = 2, .seq_len = 6}}}) {
    auto model = find_model(name).build(config);
    model.module->eval();
    std::vector<int64_t> shape{3};
    shape.insert(shape.end(), model.sample_shape.begin(), model.sample_shape.end());
    const auto out = model.forward(torch::randn(shape));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, config.num_classes})) << name;
  }
}

TEST(Models, UnknownNameListsTheKnownOnes) {
  try {
    find_model("resnet51");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "model");
    EXPECT_NE(std::string(error.what()).find("gpt, mlp, resnet18, resnet50, transformer"), std::string::npos);
  }
}

TEST(Models, HeadsMustDivideWidth) {
  try {
    find_model("transformer").build({.num_classes = 2, .width = 30, .depth = 1, .heads = 4, .seq_len = 2});
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "heads");
  }
}

}  // namespace
}  // namespace ts::worker
