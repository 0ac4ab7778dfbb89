#include "agent/judge/timing_summary.hpp"

#include <fmt/format.h>

#include <vector>

#include "shared/job_fields.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/statistics.hpp"

namespace ts::agent {

void summarize_timing(nlohmann::json& result) {
  if (result.value("status", std::string()) != "ok" || !result.contains("timing")) return;
  const auto& job = result.at("job");
  auto& timing = result.at("timing");
  const auto epochs = timing.at("epoch_seconds").get<std::vector<double>>();
  std::vector<double> steps;
  for (const auto& epoch : timing.at("step_seconds")) {
    for (const auto& step : epoch) steps.push_back(step.get<double>());
  }
  const auto s = stats::summarize(steps);
  const double median_epoch = epochs.empty() ? 0.0 : stats::median(epochs);
  // Every rank steps through its own batch: a step of N ranks is N batches.
  const auto samples_per_step = job_fields::get<int64_t>(job, "batch_size") * job_fields::get<int64_t>(job, "gpus");
  const auto iterations = timing.at("iterations_per_epoch").get<int64_t>();
  timing["median_epoch_seconds"] = median_epoch;
  timing["median_step_seconds"] = s.median;
  // A generation is an epoch of decode steps: its samples are the sequences it generates.
  const bool generate = job_fields::get<std::string>(job, "task") == "generate";
  const auto samples_per_epoch = samples_per_step * (generate ? 1 : iterations);
  timing["samples_per_second"] = median_epoch > 0 ? static_cast<double>(samples_per_epoch) / median_epoch : 0.0;
  if (const auto model = job_fields::get<std::string>(job, "model"); !generate && models::reads_tokens(model)) {
    timing["tokens_per_second"] =
        timing["samples_per_second"].get<double>() * static_cast<double>(models::knobs_of(job).at("seq_len"));
  }
  timing["step_cv"] = s.cv;
  const double spread = s.median > 0 ? s.iqr / s.median : 0.0;
  timing["step_iqr_over_median"] = spread;
  const bool noisy = spread > noisy_iqr_over_median;
  timing["noisy"] = noisy;
  if (noisy) {
    result["warnings"].push_back(
        fmt::format("noisy measurement: step-time IQR/median is {:.3f} (above {})", spread, noisy_iqr_over_median));
  }
  if (epochs.size() >= 2) {
    const std::vector<double> rest(epochs.begin() + 1, epochs.end());
    timing["warmup_insufficient"] = epochs.front() > warmup_insufficient_ratio * stats::median(rest);
  } else {
    timing["warmup_insufficient"] = nullptr;
  }
  if (job_fields::get<std::string>(job, "task") == "infer") {
    timing["latency"] = {{"p50", s.median}, {"p90", s.p90}, {"p99", s.p99}};
  }
  if (const auto shapes = result.find("shapes"); shapes != result.end() && shapes->is_array()) {
    for (auto& shape : *shapes) {
      const auto shape_steps = shape.at("step_seconds").get<std::vector<double>>();
      if (!shape_steps.empty()) shape["median_step_seconds"] = stats::median(shape_steps);
    }
  }
}

nlohmann::json per_unit_of_work(const nlohmann::json& result, const std::string& rate, double per_second) {
  const auto value = result.value(nlohmann::json::json_pointer("/timing/" + rate), nlohmann::json());
  if (!value.is_number() || value.get<double>() <= 0) return nullptr;
  return per_second / value.get<double>();
}

}  // namespace ts::agent
