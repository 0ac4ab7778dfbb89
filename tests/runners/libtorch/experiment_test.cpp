// Whole experiments through run_experiment, on tiny shapes.
#include "runners/libtorch/experiment.hpp"

#include <ATen/Context.h>
#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "runners/libtorch/forward_path.hpp"
#include "shared/schema.hpp"
#include "tests/runners/libtorch/tiny_jobs.hpp"

namespace ts::worker {
namespace {

Result run(nlohmann::json document) { return run_experiment(parse_job(document)); }

// The result as the agent passes it on: the raw measurements judged.
nlohmann::json judged(const Result& result) {
  auto document = to_json(result);
  agent::judge(document, {});
  return document;
}

nlohmann::json with(nlohmann::json document, const nlohmann::json& changes) {
  document.update(changes);
  return document;
}

void expect_valid_document(const Result& result) {
  static const schema::Validator validator("result.schema.json");
  const auto problems = validator.problems(to_json(result));
  EXPECT_TRUE(problems.empty()) << problems.front().field << ": " << problems.front().expected;
}

TEST(Experiment, EagerAndCompiledStartFromTheSameLossAndBothLearn) {
  for (auto base : {testing::tiny_mlp(), testing::tiny_resnet18()}) {
    base["epochs"] = 3;
    base["data_batches"] = 1;  // one batch to overfit: the loss must fall
    const auto eager = run(with(base, {{"mode", "eager"}}));
    const auto compiled = run(with(base, {{"mode", "compiled"}}));
    ASSERT_EQ(eager.status, Status::ok) << eager.error.value_or("");
    ASSERT_EQ(compiled.status, Status::ok) << compiled.error.value_or("");
    const double first = *eager.loss->first_step;
    EXPECT_NEAR(*compiled.loss->first_step, first, 1e-4 * std::max(1.0, std::abs(first))) << base["model"];
    EXPECT_LT(*eager.loss->epoch_final.back(), first) << base["model"];
    EXPECT_LT(*compiled.loss->epoch_final.back(), first) << base["model"];
    EXPECT_EQ(compiled.execution->mode, Mode::compiled);
    EXPECT_EQ(compiled.execution->compiler, "torchscript-nnc");
    EXPECT_EQ(eager.execution->compiler, "none");
    expect_valid_document(eager);
    expect_valid_document(compiled);
  }
}

TEST(Experiment, CompiledModeReportsTheFusedGroupsThatRan) {
  const auto result = run(with(testing::tiny_transformer(), {{"mode", "compiled"}}));
  ASSERT_EQ(result.status, Status::ok) << result.error.value_or("");
  ASSERT_TRUE(result.execution->fusion.has_value());
  EXPECT_GT(result.execution->fusion->fused_kernels, 0);
  EXPECT_TRUE(result.execution->capture_seconds.has_value());
  EXPECT_FALSE(result.execution->fallback_reason.has_value());
}

TEST(Experiment, WarmupIsExcludedFromTheTimedEpochs) {
  const auto result =
      run(with(testing::tiny_mlp(), {{"mode", "compiled"}, {"warmup", 3}, {"epochs", 2}, {"iters", 4}}));
  ASSERT_EQ(result.status, Status::ok);
  const auto& timing = *result.timing;
  EXPECT_EQ(timing.warmup_iterations, 3);
  ASSERT_EQ(timing.step_seconds.size(), 2u);
  for (const auto& epoch : timing.step_seconds) EXPECT_EQ(epoch.size(), 4u);
  ASSERT_TRUE(timing.first_iteration_seconds.has_value());
  EXPECT_LE(*timing.first_iteration_seconds, timing.warmup_seconds);
  for (std::size_t e = 0; e < timing.epoch_seconds.size(); ++e) {
    double steps = 0;
    for (double s : timing.step_seconds[e]) steps += s;
    EXPECT_LE(steps, timing.epoch_seconds[e]);
  }
  const auto summary = judged(result).at("timing");
  EXPECT_NEAR(summary.at("samples_per_second").get<double>(), 8 * 4 / summary.at("median_epoch_seconds").get<double>(),
              1e-6);
}

// Which steps the epochs time, shown by the losses rather than by clocks: on
// one fixed batch, 3 warm-up steps and 1 timed step must time what is the
// 4th step of a run without warm-up.
TEST(Experiment, TheTimedStepsComeAfterTheWarmupSteps) {
  const auto base = with(testing::tiny_mlp(), {{"data_batches", 1}, {"threads", 1}, {"epochs", 1}});
  const auto warmed = run(with(base, {{"warmup", 3}, {"iters", 1}}));
  // warmup 0 still runs one untimed iteration first (compilation never
  // falls in the timed epochs): 1 + 3 steps, as 3 + 1.
  const auto cold = run(with(base, {{"warmup", 0}, {"iters", 3}}));
  ASSERT_EQ(warmed.status, Status::ok);
  ASSERT_EQ(cold.status, Status::ok);
  EXPECT_EQ(warmed.timing->step_seconds.at(0).size(), 1u);
  EXPECT_EQ(cold.timing->step_seconds.at(0).size(), 3u);
  EXPECT_TRUE(cold.timing->first_iteration_seconds.has_value());
  EXPECT_DOUBLE_EQ(*warmed.loss->first_step, *cold.loss->first_step);
  EXPECT_NEAR(*warmed.loss->epoch_final.at(0), *cold.loss->epoch_final.at(0), 1e-6);
  // And the warm-up really moved the weights before timing began.
  EXPECT_LT(*warmed.loss->epoch_final.at(0), *warmed.loss->first_step);
}

TEST(Experiment, Bf16RunsOnCpuInBothModes) {
  for (const char* mode : {"eager", "compiled"}) {
    const auto result = run(with(testing::tiny_mlp(), {{"precision", "bf16"}, {"mode", mode}}));
    ASSERT_EQ(result.status, Status::ok) << mode << ": " << result.error.value_or("");
    EXPECT_EQ(result.execution->precision, Precision::bf16);
    EXPECT_EQ(result.execution->autocast_dtype, "bfloat16");
    EXPECT_FALSE(result.execution->loss_scaling.has_value());
  }
}

// tf32 and cudnn_benchmark (docs/gpu.md): LibTorch's defaults recorded when
// the job leaves them to the framework; set, and recorded, when it asks.
TEST(Experiment, TheMathPolicyIsAppliedAndRecorded) {
  auto& context = at::globalContext();
  const bool matmul = context.allowTF32CuBLAS(), conv = context.allowTF32CuDNN(), tune = context.benchmarkCuDNN();
  const auto framework = run(testing::tiny_mlp());
  ASSERT_EQ(framework.status, Status::ok) << framework.error.value_or("");
  EXPECT_EQ(framework.execution->math, (nlohmann::json{{"tf32", "framework"},
                                                       {"cudnn_benchmark", "framework"},
                                                       {"tf32_matmul", false},
                                                       {"tf32_conv", true},
                                                       {"conv_autotune", false}}));
  for (const char* value : {"on", "off"}) {
    const bool on = std::string(value) == "on";
    const auto asked = run(with(testing::tiny_mlp(), {{"tf32", value}, {"cudnn_benchmark", value}}));
    ASSERT_EQ(asked.status, Status::ok) << asked.error.value_or("");
    EXPECT_EQ(asked.execution->math, (nlohmann::json{{"tf32", value},
                                                     {"cudnn_benchmark", value},
                                                     {"tf32_matmul", on},
                                                     {"tf32_conv", on},
                                                     {"conv_autotune", on}}));
    expect_valid_document(asked);
  }
  context.setAllowTF32CuBLAS(matmul);  // the process's defaults back for the other tests
  context.setAllowTF32CuDNN(conv);
  context.setBenchmarkCuDNN(tune);
}

TEST(Experiment, Fp16IsUnsupportedOnCpu) {
  const auto result = run(with(testing::tiny_mlp(), {{"precision", "fp16"}}));
  EXPECT_EQ(result.status, Status::unsupported);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_NE(result.error->find("unsupported on this device"), std::string::npos) << *result.error;
  expect_valid_document(result);
}

TEST(Experiment, CudaIsUnsupportedWithoutCudaLibTorch) {
#ifndef TORCHSWEEP_WITH_CUDA
  const auto result = run(with(testing::tiny_mlp(), {{"device", "cuda:0"}}));
  EXPECT_EQ(result.status, Status::unsupported);
  expect_valid_document(result);
#else
  GTEST_SKIP() << "built with CUDA";
#endif
}

TEST(Experiment, InferenceReportsLatencyPercentiles) {
  for (const char* mode : {"eager", "compiled"}) {
    const auto result = run(with(testing::tiny_transformer(), {{"task", "infer"}, {"mode", mode}}));
    ASSERT_EQ(result.status, Status::ok) << result.error.value_or("");
    const auto latency = judged(result).at("timing").at("latency");
    EXPECT_LE(latency.at("p50").get<double>(), latency.at("p90").get<double>());
    EXPECT_LE(latency.at("p90").get<double>(), latency.at("p99").get<double>());
    EXPECT_TRUE(result.loss->first_step.has_value());
    if (std::string(mode) == "compiled") {
      EXPECT_GT(result.execution->fusion->fused_kernels, 0);
    }
    expect_valid_document(result);
  }
}

const CaptureFunction failing_capture = [](Model&, const torch::Tensor&,
                                           const PrecisionPlan&) -> std::unique_ptr<ForwardPath> {
  throw std::runtime_error("tracer cannot handle this model");
};

TEST(Experiment, CaptureFailureFailsVisiblyWithoutFallback) {
  const auto result =
      run_experiment(parse_job(with(testing::tiny_mlp(), {{"mode", "compiled"}})), nullptr, failing_capture);
  EXPECT_EQ(result.status, Status::failed);
  EXPECT_NE(result.error->find("tracer cannot handle this model"), std::string::npos);
  expect_valid_document(result);
}

// A fused graph that cannot compile fails at its first run, not at capture:
// on CUDA, NNC's kernels are compiled by NVRTC, whose builtins library a C++
// process may not find (issue 32). The warm-up is then the check.
class FailsAtFirstRun final : public ForwardPath {
 public:
  torch::Tensor forward(const torch::Tensor&) override {
    throw std::runtime_error("nvrtc: error: failed to open libnvrtc-builtins.so.13.0");
  }
  std::string compiler() const override { return "torchscript"; }
};
const CaptureFunction capture_failing_at_first_run = [](Model&, const torch::Tensor&, const PrecisionPlan&) {
  return std::unique_ptr<ForwardPath>(std::make_unique<FailsAtFirstRun>());
};

TEST(Experiment, AFusedGraphThatCannotCompileFallsBackBeforeAnythingIsTimed) {
  const auto job = parse_job(with(testing::tiny_mlp(), {{"mode", "compiled"}, {"fallback", "eager"}}));
  const auto result = run_experiment(job, nullptr, capture_failing_at_first_run);
  ASSERT_EQ(result.status, Status::ok);
  EXPECT_EQ(result.execution->mode, Mode::eager);
  ASSERT_TRUE(result.execution->fallback_reason.has_value());
  EXPECT_NE(result.execution->fallback_reason->find("libnvrtc-builtins"), std::string::npos);
  const auto failed = run_experiment(parse_job(with(testing::tiny_mlp(), {{"mode", "compiled"}})), nullptr,
                                     capture_failing_at_first_run);
  EXPECT_EQ(failed.status, Status::failed);
  EXPECT_NE(failed.error->find("libnvrtc-builtins"), std::string::npos);
}

TEST(Experiment, FallbackToEagerIsRecorded) {
  const auto job = parse_job(with(testing::tiny_mlp(), {{"mode", "compiled"}, {"fallback", "eager"}}));
  const auto result = run_experiment(job, nullptr, failing_capture);
  ASSERT_EQ(result.status, Status::ok);
  EXPECT_EQ(result.execution->mode, Mode::eager);
  EXPECT_EQ(result.execution->compiler, "none");
  ASSERT_TRUE(result.execution->fallback_reason.has_value());
  EXPECT_NE(result.execution->fallback_reason->find("tracer cannot handle this model"), std::string::npos);
  // Same weights as a plain eager run: the fallback starts over from the seed.
  const auto eager = run(with(testing::tiny_mlp(), {{"mode", "eager"}}));
  EXPECT_DOUBLE_EQ(*result.loss->first_step, *eager.loss->first_step);
  expect_valid_document(result);
}

// A captured path that computes something else: the traced graph's output
// scaled by 1.01 (a stand-in for a miscompiled kernel).
class MiscompiledPath : public ForwardPath {
 public:
  explicit MiscompiledPath(std::unique_ptr<ForwardPath> traced) : traced_(std::move(traced)) {}
  torch::Tensor forward(const torch::Tensor& input) override { return traced_->forward(input) * 1.01; }
  std::string compiler() const override { return traced_->compiler(); }

 private:
  std::unique_ptr<ForwardPath> traced_;
};

const CaptureFunction miscompiling_capture = [](Model& model, const torch::Tensor& example,
                                                const PrecisionPlan& plan) -> std::unique_ptr<ForwardPath> {
  return std::make_unique<MiscompiledPath>(capture_torchscript(model, example, plan));
};

TEST(Experiment, TheAccuracyGatePassesAFaithfulCaptureAgainstFloat64) {
  for (const auto& base : {with(testing::tiny_mlp(), {{"task", "infer"}}), testing::tiny_mlp(),
                           testing::tiny_resnet18(), with(testing::tiny_mlp(), {{"precision", "bf16"}})}) {
    const auto result = run(with(base, {{"mode", "compiled"}}));
    ASSERT_EQ(result.status, Status::ok) << result.error.value_or("");
    expect_valid_document(result);
    const auto accuracy = judged(result).at("accuracy");
    EXPECT_EQ(accuracy.at("reference"), "float64");
    EXPECT_EQ(accuracy.at("status"), "pass") << base.dump() << accuracy.dump();
    EXPECT_LE(accuracy.at("deviation").get<double>(), 1.0);
  }
  EXPECT_FALSE(judged(run(with(testing::tiny_mlp(), {{"mode", "eager"}}))).contains("accuracy"));
}

TEST(Experiment, TheAccuracyGateFailsACaptureThatComputesSomethingElse) {
  const auto job = with(testing::tiny_mlp(), {{"mode", "compiled"}});
  const auto checked = run_experiment(parse_job(job), nullptr, miscompiling_capture);
  ASSERT_EQ(checked.status, Status::ok) << checked.error.value_or("");
  expect_valid_document(checked);
  const auto flagged = judged(checked);
  EXPECT_EQ(flagged.at("status"), "ok");  // the timing stands, flagged
  EXPECT_EQ(flagged.at("accuracy").at("status"), "fail") << flagged.at("accuracy").dump();
  EXPECT_GT(flagged.at("accuracy").at("deviation").get<double>(), 1.0);
  const auto required =
      judged(run_experiment(parse_job(with(job, {{"accuracy", "required"}})), nullptr, miscompiling_capture));
  EXPECT_EQ(required.at("status"), "failed");
  EXPECT_NE(required.at("error").get<std::string>().find("accuracy: required"), std::string::npos);
}

TEST(Experiment, ContextNamesTheBuildAndThreads) {
  const auto result = run(with(testing::tiny_mlp(), {{"threads", 1}}));
  EXPECT_EQ(result.context.at("intra_op_threads"), 1);
  EXPECT_EQ(result.context.at("torch_version").get<std::string>().rfind("2.", 0), 0u);
  EXPECT_FALSE(result.context.at("torchsweep_commit").get<std::string>().empty());
  EXPECT_EQ(result.memory->source, "rss");
  EXPECT_GT(*result.memory->peak_rss_bytes, 0);
}

}  // namespace
}  // namespace ts::worker
