// The compiled path at the level of one forward: same numbers as eager,
// gradients and BatchNorm statistics reaching the real module, fusion.
#include <gtest/gtest.h>

#include "runners/libtorch/forward_path.hpp"
#include "runners/libtorch/fusion_observer.hpp"
#include "runners/libtorch/models/registry.hpp"

namespace ts::worker {
namespace {

struct Twins {
  Model eager, compiled;
};

// Two copies of one model, built from the same seed.
Twins twins(const std::string& name, const ModelConfig& config, bool train) {
  auto build = [&] {
    torch::manual_seed(7);
    auto model = find_model(name).build(config);
    model.module->train(train);
    return model;
  };
  return {build(), build()};
}

torch::Tensor input_for(const Model& model, int64_t batch) {
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), model.sample_shape.begin(), model.sample_shape.end());
  torch::manual_seed(11);
  return torch::randn(shape);
}

const PrecisionPlan fp32{};

class CompiledMode : public ::testing::Test {
 protected:
  void SetUp() override { enable_fusers(); }
};

TEST_F(CompiledMode, MatchesEagerAndGradientsReachTheModule) {
  auto [eager, compiled] = twins("mlp", {.input_size = 16, .num_classes = 4, .width = 32, .depth = 2}, true);
  const auto x = input_for(eager, 8);
  auto path = capture_torchscript(compiled, x, fp32);
  for (int run = 0; run < 3; ++run) {  // the profiling run, then optimised (fused) runs
    for (auto* model : {&eager, &compiled}) model->module->zero_grad();
    const auto expected = eager.forward(x);
    const auto actual = path->forward(x);
    ASSERT_TRUE(torch::allclose(actual, expected, 1e-5, 1e-6)) << "run " << run;
    expected.pow(2).sum().backward();
    actual.pow(2).sum().backward();
    const auto eager_params = eager.module->parameters();
    const auto compiled_params = compiled.module->parameters();
    for (std::size_t i = 0; i < eager_params.size(); ++i) {
      ASSERT_TRUE(compiled_params[i].grad().defined()) << "parameter " << i;
      EXPECT_TRUE(torch::allclose(compiled_params[i].grad(), eager_params[i].grad(), 1e-4, 1e-5)) << i;
    }
  }
}

TEST_F(CompiledMode, BatchNormRunningStatisticsUpdateInTheModule) {
  auto [eager, compiled] = twins("resnet18", {.input_size = 32, .num_classes = 10}, true);
  const auto x = input_for(eager, 4);
  const auto before = compiled.module->named_buffers()["bn1.running_mean"].clone();
  auto path = capture_torchscript(compiled, x, fp32);
  // Capture restores the buffers: tracing must not count as a training step.
  EXPECT_TRUE(torch::equal(compiled.module->named_buffers()["bn1.running_mean"], before));
  for (int run = 0; run < 2; ++run) {
    eager.forward(x);
    path->forward(x);
  }
  auto eager_buffers = eager.module->named_buffers();
  auto compiled_buffers = compiled.module->named_buffers();
  EXPECT_FALSE(torch::equal(compiled_buffers["bn1.running_mean"], before));
  for (const char* name : {"bn1.running_mean", "bn1.running_var", "layer4.1.bn2.running_var"}) {
    EXPECT_TRUE(torch::allclose(compiled_buffers[name], eager_buffers[name], 1e-4, 1e-5)) << name;
  }
  EXPECT_EQ(compiled_buffers["bn1.num_batches_tracked"].item<int64_t>(), 2);
}

TEST_F(CompiledMode, FusesElementwiseChainsInInferenceAndTraining) {
  for (bool train : {false, true}) {
    auto [eager, compiled] =
        twins("transformer", {.num_classes = 10, .width = 32, .depth = 2, .heads = 4, .seq_len = 8}, train);
    const auto x = input_for(compiled, 4);
    auto path = capture_torchscript(compiled, x, fp32);
    auto run = [&] {
      if (train) {
        path->forward(x).sum().backward();
      } else {
        torch::NoGradGuard no_grad;
        path->forward(x);
      }
    };
    run();  // profiling run
    run();  // optimised: fusion groups compiled
    FusionObserver observer;
    run();
    const auto report = observer.report();
    EXPECT_GT(report.fused_kernels, 0) << (train ? "training" : "inference");
    EXPECT_GE(report.fused_launches_per_step, report.fused_kernels);
    for (const auto& name : report.kernel_names) EXPECT_EQ(name.rfind("fused_", 0), 0u) << name;
  }
}

TEST_F(CompiledMode, EagerRunsAreNotCountedAsFusion) {
  auto model = twins("mlp", {.input_size = 16, .num_classes = 4, .width = 32, .depth = 2}, false).eager;
  FusionObserver observer;
  torch::NoGradGuard no_grad;
  model.forward(input_for(model, 8));
  EXPECT_EQ(observer.report().fused_kernels, 0);
}

TEST_F(CompiledMode, Bf16AutocastIsRecordedIntoTheGraph) {
  PrecisionPlan bf16{Precision::bf16, c10::DeviceType::CPU, at::kBFloat16, false};
  auto [eager, compiled] = twins("mlp", {.input_size = 16, .num_classes = 4, .width = 32, .depth = 2}, false);
  const auto x = input_for(eager, 8);
  auto eager_path = make_eager_path(eager, bf16);
  auto compiled_path = capture_torchscript(compiled, x, bf16);
  torch::NoGradGuard no_grad;
  for (int run = 0; run < 3; ++run) {
    const auto expected = eager_path->forward(x);
    const auto actual = compiled_path->forward(x);  // runs with autocast off
    EXPECT_EQ(expected.scalar_type(), at::kBFloat16);
    EXPECT_EQ(actual.scalar_type(), at::kBFloat16);
    EXPECT_TRUE(torch::allclose(actual.to(torch::kFloat), expected.to(torch::kFloat), 2e-2, 2e-2));
  }
}

}  // namespace
}  // namespace ts::worker
