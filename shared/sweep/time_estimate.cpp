#include "shared/sweep/time_estimate.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/job_resolution.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/models/flops.hpp"
#include "shared/peak_figure.hpp"

namespace ts::sweep {

JobEstimate estimate_job(const nlohmann::json& job, const nlohmann::json& peak_flops,
                         const EstimateAssumptions& assumptions) {
  JobEstimate estimate;
  const auto task = job_fields::get<std::string>(job, "task");
  const auto flops = models::step_flops(job);  // throws for a model without a formula
  const auto epochs = job_fields::get<int64_t>(job, "epochs");
  const auto warmup = job_fields::get<int64_t>(job, "warmup");
  if (task == "generate") {
    // A decode step is one token of each sequence: the forward over the
    // model's positions divided by them.
    const auto seq_len = static_cast<double>(models::knobs_of(job).at("seq_len"));
    estimate.flops_per_step = flops.per_step / seq_len;
  } else {
    estimate.flops_per_step = flops.per_step;
  }
  estimate.steps = warmup + epochs * job_resolution::iterations(job);
  // IEEE fp32 unless TF32 is asked for: the slower figure when the
  // framework decides, so that the estimate errs long.
  const auto precision = job_fields::get<std::string>(job, "precision");
  const bool cuda = job_fields::get<std::string>(job, "device").starts_with("cuda");
  estimate.peak_dtype = precision != "fp32" ? "bf16" : (cuda && job.value("tf32", "") == "on" ? "tf32" : "fp32");
  std::vector<int64_t> gpus(static_cast<size_t>(job_fields::get<int64_t>(job, "gpus")));
  std::iota(gpus.begin(), gpus.end(), int64_t{0});
  const auto peak = peak_figure(peak_flops, cuda, gpus, estimate.peak_dtype, job_fields::get<int64_t>(job, "threads"));
  if (!peak || peak->flops_per_s <= 0) {
    throw InvalidInput("peak_flops", "a measured " + estimate.peak_dtype + " figure for the job's devices (" +
                                         job_fields::get<std::string>(job, "device") + ")");
  }
  estimate.peak_flops_per_s = peak->flops_per_s;
  double step_s = estimate.flops_per_step / (peak->flops_per_s * assumptions.mfu);
  if (task == "generate") step_s = std::max(step_s, assumptions.decode_step_s);
  estimate.compute_s = static_cast<double>(estimate.steps) * step_s;
  estimate.allowance_s = assumptions.start_s;
  if (job_fields::get<std::string>(job, "mode") != "eager") {
    const auto runner = job_fields::get<std::string>(job, "runner");
    const auto named = assumptions.compile_s.find(runner);
    estimate.allowance_s += named != assumptions.compile_s.end() ? named->second : assumptions.compile_s_otherwise;
  }
  estimate.seconds = estimate.compute_s + estimate.allowance_s;
  return estimate;
}

}  // namespace ts::sweep
