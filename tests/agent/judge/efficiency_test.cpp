// The efficiency section the agent adds to results: FLOPs per step, the
// rate achieved, and the fraction of the devices' measured peak.
#include "agent/judge/efficiency.hpp"

#include <gtest/gtest.h>

#include "shared/models/flops.hpp"

namespace ts::agent {
namespace {

const nlohmann::json peaks{
    {"devices",
     {{{"device", "cpu"}, {"name", "CPU"}, {"fp32", 1e11}, {"bf16", 2e10}},
      {{"device", "cuda:0"}, {"index", 0}, {"name", "GPU"}, {"fp32", 5e13}, {"bf16", 7e14}, {"tf32", 3e14}},
      {{"device", "cuda:1"}, {"index", 1}, {"name", "GPU"}, {"fp32", 5e13}, {"bf16", 6e14}}}}};

nlohmann::json result(nlohmann::json job, double median_step_seconds) {
  job["model"] = "resnet18";
  job["batch_size"] = 32;
  return {{"status", "ok"}, {"job", job}, {"timing", {{"median_step_seconds", median_step_seconds}}}};
}

TEST(Efficiency, ACpuJobIsMeasuredAgainstTheCpusPeakInItsPrecision) {
  const auto document = result({{"device", "cpu"}, {"precision", "fp32"}}, 0.5);
  const auto efficiency = efficiency_of(document, peaks, {});
  ASSERT_TRUE(efficiency);
  const double per_step = models::forward_flops_per_sample(document.at("job")) * 32 * 3;
  EXPECT_DOUBLE_EQ(efficiency->at("flops_per_step").get<double>(), per_step);
  EXPECT_DOUBLE_EQ(efficiency->at("achieved_flops_per_s").get<double>(), per_step / 0.5);
  EXPECT_EQ(efficiency->at("peak_dtype"), "fp32");
  EXPECT_DOUBLE_EQ(efficiency->at("mfu").get<double>(), per_step / 0.5 / 1e11);
}

TEST(Efficiency, ACudaJobSumsThePeaksOfItsGpusAndFp16CountsAsBf16) {
  const auto document = result({{"device", "cuda"}, {"precision", "fp16"}, {"gpus", 2}}, 0.01);
  const auto efficiency = efficiency_of(document, peaks, {0, 1});
  ASSERT_TRUE(efficiency);
  EXPECT_EQ(efficiency->at("peak_dtype"), "bf16");
  EXPECT_DOUBLE_EQ(efficiency->at("peak_flops_per_s").get<double>(), 7e14 + 6e14);
  const auto one = efficiency_of(document, peaks, {1});
  EXPECT_DOUBLE_EQ(one->at("peak_flops_per_s").get<double>(), 6e14);
  // A GPU the agent measured no peak for: the figures stand, no utilisation.
  EXPECT_TRUE(efficiency_of(document, peaks, {0, 5})->at("mfu").is_null());
}

// JAX runs fp32 with TensorFloat-32 by default: against IEEE fp32's peak its
// MFU would exceed 1 (docs/gpu.md). The result's execution.math decides.
TEST(Efficiency, AnFp32GpuJobThatAllowedTf32IsMeasuredAgainstTheTf32Peak) {
  auto document = result({{"device", "cuda"}, {"precision", "fp32"}, {"gpus", 1}}, 0.01);
  document["execution"]["math"] = {{"tf32", "framework"}, {"tf32_matmul", true}};
  const auto with_tf32 = efficiency_of(document, peaks, {0});
  EXPECT_EQ(with_tf32->at("peak_dtype"), "tf32");
  EXPECT_DOUBLE_EQ(with_tf32->at("peak_flops_per_s").get<double>(), 3e14);
  document["execution"]["math"]["tf32_matmul"] = false;
  EXPECT_EQ(efficiency_of(document, peaks, {0})->at("peak_dtype"), "fp32");
  // A peak measured before TF32 had a figure of its own: no utilisation rather than a wrong one.
  document["execution"]["math"]["tf32_matmul"] = true;
  EXPECT_TRUE(efficiency_of(document, peaks, {1})->at("mfu").is_null());
  // On a CPU there is no TF32: fp32's peak whatever the flag.
  auto cpu = result({{"device", "cpu"}, {"precision", "fp32"}}, 0.5);
  cpu["execution"]["math"] = {{"tf32", "on"}, {"tf32_matmul", true}};
  EXPECT_EQ(efficiency_of(cpu, peaks, {})->at("peak_dtype"), "fp32");
}

// PyTorch runs fp32 convolutions in TF32 by default (cudnn.allow_tf32) while
// its matmuls stay IEEE: an fp32 ResNet judged against the IEEE peak could
// come out near or above 1. Either kind of product in TF32 takes the TF32 peak.
TEST(Efficiency, AnFp32GpuJobWhoseConvolutionsAllowedTf32IsMeasuredAgainstTheTf32Peak) {
  auto document = result({{"device", "cuda"}, {"precision", "fp32"}, {"gpus", 1}}, 0.01);
  document["execution"]["math"] = {{"tf32", "framework"}, {"tf32_matmul", false}, {"tf32_conv", true}};
  EXPECT_EQ(efficiency_of(document, peaks, {0})->at("peak_dtype"), "tf32");
  document["execution"]["math"]["tf32_conv"] = false;
  EXPECT_EQ(efficiency_of(document, peaks, {0})->at("peak_dtype"), "fp32");
}

// A rate above the peak means the peak is wrong (the probe measured less
// than the model's own kernels reach): the utilisation is not silently
// above 1, the result says so.
TEST(Efficiency, ARateAboveThePeakIsFlaggedPeakBelowAchieved) {
  const auto document = result({{"device", "cpu"}, {"precision", "fp32"}}, 0.5);
  const double achieved = models::forward_flops_per_sample(document.at("job")) * 32 * 3 / 0.5;
  nlohmann::json planted = peaks;
  planted["devices"][0]["fp32"] = achieved / 1.01;  // the planted peak: 1% below the achieved rate
  const auto above = efficiency_of(document, planted, {});
  ASSERT_TRUE(above);
  EXPECT_NEAR(above->at("mfu").get<double>(), 1.01, 1e-9);
  EXPECT_EQ(above->at("peak_below_achieved"), true);
  auto slow = planted;
  slow["devices"][0]["fp32"] = achieved / 0.5;  // twice the achieved rate
  const auto below = efficiency_of(document, slow, {});
  EXPECT_NEAR(below->at("mfu").get<double>(), 0.5, 1e-9);
  EXPECT_EQ(below->at("peak_below_achieved"), false);
  EXPECT_TRUE(efficiency_of(document, nullptr, {})->at("peak_below_achieved").is_null());
}

TEST(Efficiency, WithoutAMeasuredPeakFlopsStandAndUtilisationIsNull) {
  const auto efficiency = efficiency_of(result({{"device", "cpu"}}, 0.5), nullptr, {});
  ASSERT_TRUE(efficiency);
  EXPECT_GT(efficiency->at("achieved_flops_per_s").get<double>(), 0);
  EXPECT_TRUE(efficiency->at("peak_flops_per_s").is_null());
  EXPECT_TRUE(efficiency->at("mfu").is_null());
}

TEST(Efficiency, NothingForAResultWithoutStepTimesOrOfAModelTheCatalogueLacks) {
  EXPECT_FALSE(efficiency_of({{"status", "failed"}, {"job", {{"model", "mlp"}, {"batch_size", 1}}}}, peaks, {}));
  auto own_model = result({}, 0.5);
  own_model["job"]["model"] = "a_runners_own_model";
  EXPECT_FALSE(efficiency_of(own_model, peaks, {}));
}

TEST(Efficiency, ALibraryModelIsMeasuredByTheFlopsItsRunnerCounted) {
  auto document = result({{"device", "cpu"}, {"precision", "bf16"}}, 0.25);
  document["job"]["model"] = "timm:convnext_tiny";
  EXPECT_FALSE(efficiency_of(document, peaks, {}));  // nothing counted: nothing claimed
  document["execution"]["counted_flops"] = {
      {"counter", "torch.utils.flop_counter"}, {"forward_per_sample", 8.9e9}, {"per_step", 8.5e11}};
  const auto efficiency = efficiency_of(document, peaks, {});
  ASSERT_TRUE(efficiency);
  EXPECT_EQ(efficiency->at("convention"), "flop_counter_2flops_per_mac_counted_step");
  EXPECT_DOUBLE_EQ(efficiency->at("forward_flops_per_sample").get<double>(), 8.9e9);
  EXPECT_DOUBLE_EQ(efficiency->at("flops_per_step").get<double>(), 8.5e11);
  EXPECT_DOUBLE_EQ(efficiency->at("mfu").get<double>(), 8.5e11 / 0.25 / 2e10);
  // A built-in model keeps the analytic count every runner shares.
  document["job"]["model"] = "resnet18";
  EXPECT_EQ(efficiency_of(document, peaks, {})->at("convention"), "matmul_conv_2flops_per_mac_train_3x_forward");
}

}  // namespace
}  // namespace ts::agent
