#pragma once
// The timing section's derived figures (schemas/result.schema.json), judged
// by the agent from the raw epoch and step times every runner reports:
// medians, samples/s, spread, the noisy flag, inference latency
// percentiles and warm-up sufficiency. One rule for every runner; the
// thresholds are spelled here and nowhere else.
#include <nlohmann/json.hpp>

namespace ts::agent {

// A measurement is flagged noisy above this IQR/median of its step times
// (the threshold torch.utils.benchmark warns at).
inline constexpr double noisy_iqr_over_median = 0.10;
// Warm-up did not reach the steady state when the first timed epoch took
// more than this many times the median of the others.
inline constexpr double warmup_insufficient_ratio = 1.5;

// Fills timing.median_epoch_seconds, median_step_seconds,
// samples_per_second (batch size times ranks per step; per generation for
// task generate, whose tokens generation_summary.hpp counts), step_cv,
// step_iqr_over_median, noisy, warmup_insufficient (null with fewer than
// two epochs) and, for inference, latency {p50, p90, p99}; adds a warning
// when noisy; each of the job's shapes (shapes[]) its median_step_seconds.
// Only a successful result with a timing section is touched.
void summarize_timing(nlohmann::json& result);

// `per_second` (a price, a power) per unit of work at the measured
// throughput: divided by the result's timing.RATE (samples_per_second,
// tokens_per_second); null where the result has no positive such rate.
nlohmann::json per_unit_of_work(const nlohmann::json& result, const std::string& rate, double per_second);

}  // namespace ts::agent
