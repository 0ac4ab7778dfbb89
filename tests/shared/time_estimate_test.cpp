#include "shared/sweep/time_estimate.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/models/flops.hpp"
#include "shared/sweep/sweep.hpp"

namespace ts::sweep {
namespace {

// A peak as an H200's probe would give it, on the low side of what one
// measures (bf16 dense 989 TFLOP/s, TF32 494, IEEE fp32 67 on paper), so that
// an estimate against it errs long.
nlohmann::json h200_peak() {
  return {{"devices",
           {{{"device", "cuda:0"},
             {"index", 0},
             {"name", "NVIDIA H200"},
             {"fp32", 45e12},
             {"tf32", 300e12},
             {"bf16", 650e12}}}}};
}

EstimateAssumptions assumptions() {
  return {.mfu = 0.5,
          .start_s = 10,
          .compile_s = {{"torch-compile", 90}},
          .compile_s_otherwise = 30,
          .decode_step_s = 0.01};
}

nlohmann::json resnet50(const std::string& precision, const std::string& mode) {
  return {{"model", "resnet50"},
          {"device", "cuda"},
          {"precision", precision},
          {"mode", mode},
          {"runner", "torch-compile"},
          {"batch_size", 256},
          {"input_size", 224},
          {"epochs", 3},
          {"iters", 10},
          {"warmup", 5}};
}

TEST(TimeEstimate, AJobsStepsAtThePeakAndMfuPlusItsStartAndCompile) {
  const auto job = resnet50("bf16", "compiled");
  const auto estimate = estimate_job(job, h200_peak(), assumptions());
  EXPECT_EQ(estimate.steps, 5 + 3 * 10);
  EXPECT_DOUBLE_EQ(estimate.flops_per_step, models::step_flops(job).per_step);
  EXPECT_EQ(estimate.peak_dtype, "bf16");
  EXPECT_DOUBLE_EQ(estimate.compute_s, 35 * estimate.flops_per_step / (650e12 * 0.5));
  EXPECT_DOUBLE_EQ(estimate.allowance_s, 10 + 90);
  EXPECT_DOUBLE_EQ(estimate.seconds, estimate.compute_s + 100);
  // Eager: no compile; a runner the assumptions do not name: the otherwise allowance.
  EXPECT_DOUBLE_EQ(estimate_job(resnet50("bf16", "eager"), h200_peak(), assumptions()).allowance_s, 10);
  auto jax = job;
  jax["runner"] = "jax";
  EXPECT_DOUBLE_EQ(estimate_job(jax, h200_peak(), assumptions()).allowance_s, 10 + 30);
}

TEST(TimeEstimate, StepsComeFromTheDatasetWithoutItersAndFp16IsMeasuredAgainstBf16) {
  auto job = resnet50("fp16", "eager");
  job.erase("iters");
  job["dataset_size"] = 1000;  // 3 steps of 256: the iterations the job resolves to, and its runner runs
  const auto estimate = estimate_job(job, h200_peak(), assumptions());
  EXPECT_EQ(estimate.steps, 5 + 3 * 3);
  EXPECT_EQ(estimate.peak_dtype, "bf16");
}

TEST(TimeEstimate, Fp32IsIeeeUnlessTf32IsAskedFor) {
  auto job = resnet50("fp32", "eager");
  EXPECT_EQ(estimate_job(job, h200_peak(), assumptions()).peak_dtype, "fp32");
  job["tf32"] = "framework";  // the framework decides: the slower figure, so the estimate errs long
  EXPECT_EQ(estimate_job(job, h200_peak(), assumptions()).peak_dtype, "fp32");
  job["tf32"] = "on";
  const auto estimate = estimate_job(job, h200_peak(), assumptions());
  EXPECT_EQ(estimate.peak_dtype, "tf32");
  EXPECT_DOUBLE_EQ(estimate.peak_flops_per_s, 300e12);
}

TEST(TimeEstimate, ADecodeStepTakesAtLeastTheMemoryBoundFloor) {
  const nlohmann::json job{{"model", "gpt"},  {"device", "cuda"},  {"task", "generate"}, {"runner", "torch-compile"},
                           {"batch_size", 8}, {"prompt_len", 128}, {"new_tokens", 64},   {"epochs", 2},
                           {"warmup", 3}};
  const auto estimate = estimate_job(job, h200_peak(), assumptions());
  EXPECT_EQ(estimate.steps, 3 + 2 * 63);
  EXPECT_DOUBLE_EQ(estimate.compute_s, estimate.steps * 0.01);  // a tiny decoder's FLOPs take far less
}

TEST(TimeEstimate, APeakWithoutTheJobsDeviceOrFigureIsRefusedByName) {
  nlohmann::json cpu_only{{"devices", {{{"device", "cpu"}, {"name", "x86_64"}, {"fp32", 1e11}, {"bf16", 2e11}}}}};
  try {
    estimate_job(resnet50("bf16", "eager"), cpu_only, assumptions());
    FAIL() << "a CUDA job estimated against a CPU's peak";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "peak_flops");
  }
  auto no_tf32 = h200_peak();
  no_tf32["devices"][0]["tf32"] = nullptr;
  auto job = resnet50("fp32", "eager");
  job["tf32"] = "on";
  EXPECT_THROW(estimate_job(job, no_tf32, assumptions()), InvalidInput);
}

// The GPU visit's plan (examples/gpu-visit/plan.json) keeps its promise: by
// its own assumptions, its core ends within the seconds it states on an
// H200, and the whole plan fits the visit's default budget.
TEST(TimeEstimate, TheGpuVisitsCoreEndsWithinItsStatedSecondsOnAnH200) {
  const std::filesystem::path folder = std::filesystem::path(TS_SOURCE_DIR) / "examples" / "gpu-visit";
  const auto plan = json_io::read((folder / "plan.json").string());
  const auto& stated = plan.at("assumptions");
  EstimateAssumptions assumed{.mfu = stated.at("mfu"),
                              .start_s = stated.at("start_s"),
                              .compile_s = stated.at("compile_s").get<std::map<std::string, double>>(),
                              .compile_s_otherwise = stated.at("compile_s_otherwise"),
                              .decode_step_s = stated.at("decode_step_s")};
  double all = plan.at("probes_within_s").get<double>();
  for (const auto& entry : plan.at("classes")) {
    const auto file = (folder / entry.at("sweep").get<std::string>()).string();
    const auto planned = expand(read_document(file), file);
    double total = 0;
    for (const auto& job : planned.jobs) total += estimate_job(job.document, h200_peak(), assumed).seconds;
    if (entry.contains("within_s")) {
      EXPECT_LE(total, entry.at("within_s").get<double>()) << entry.dump();
    }
    EXPECT_GT(total, 0);
    all += total;
  }
  // scripts/gpu-visit's default budget less what it keeps back for the results.
  EXPECT_LE(all, 540 - 45) << "the plan does not fit one visit";
}

}  // namespace
}  // namespace ts::sweep
