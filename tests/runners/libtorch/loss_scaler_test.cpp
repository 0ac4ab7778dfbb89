// The worker's dynamic loss scaling (LossScaler), on CPU tensors: fp16 jobs
// run on CUDA only, but the rule is the same arithmetic on either device,
// and every runner follows it (docs/frameworks.md).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "runners/libtorch/precision.hpp"

namespace ts::worker {
namespace {

struct Step {
  torch::nn::Linear layer{torch::nn::LinearOptions(4, 2)};
  torch::optim::SGD optimizer{layer->parameters(), torch::optim::SGDOptions(0.1)};

  // One training step through `scaler`; `poison` puts an inf in the loss's gradient.
  bool run(LossScaler& scaler, bool poison = false) {
    optimizer.zero_grad();
    auto loss = layer->forward(torch::ones({3, 4})).sum();
    if (poison) loss = loss * std::numeric_limits<float>::infinity();
    scaler.scale(loss).backward();
    return scaler.step(optimizer);
  }
};

TEST(LossScaler, DoublesTheScaleAfterEachGrowthIntervalOfCleanSteps) {
  Step step;
  LossScaler scaler(torch::kCPU, 1024.0, 2);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(step.run(scaler));
  const auto report = scaler.report();
  EXPECT_EQ(report.initial_scale, 1024.0);
  EXPECT_EQ(report.final_scale, 4096.0);
  EXPECT_EQ(report.skipped_steps, 0);
}

TEST(LossScaler, SkipsAStepWithANonFiniteGradientAndHalvesTheScale) {
  Step step;
  LossScaler scaler(torch::kCPU, 65536.0, 2000);
  const auto before = step.layer->weight.detach().clone();
  EXPECT_FALSE(step.run(scaler, /*poison=*/true));
  EXPECT_TRUE(torch::equal(step.layer->weight, before));
  EXPECT_EQ(scaler.report().final_scale, 32768.0);
  EXPECT_EQ(scaler.report().skipped_steps, 1);
  // A clean step after it is taken, with the gradient unscaled.
  EXPECT_TRUE(step.run(scaler));
  EXPECT_TRUE(torch::allclose(step.layer->weight, before - 0.1 * 3.0, 1e-6, 1e-6));
}

}  // namespace
}  // namespace ts::worker
