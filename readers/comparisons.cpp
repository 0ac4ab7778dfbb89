#include "readers/comparisons.hpp"

#include <algorithm>
#include <cmath>

#include "shared/statistics.hpp"

namespace ts::readers {

namespace {

EstimateCells cells(const stats::Interval& interval, const Samples& a, const Samples& b) {
  if (std::min(a.size(), b.size()) >= stats::minimum_runs_for_interval) {
    return {interval.estimate, interval.low, interval.high};
  }
  return {interval.estimate, nullptr, nullptr};
}

stats::Interval ratio(const Samples& numerator, const Samples& denominator, std::uint64_t seed) {
  return stats::ratio_of_medians(numerator, denominator, {.seed = seed});
}

}  // namespace

double smallest_attainable_p(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) return 1;
  // log C(n + m, n) through lgamma: no overflow for long histories.
  const double log_choose = std::lgamma(static_cast<double>(n + m + 1)) - std::lgamma(static_cast<double>(n + 1)) -
                            std::lgamma(static_cast<double>(m + 1));
  return std::min(1.0, 2 * std::exp(-log_choose));
}

bool too_few_runs_to_flag(std::size_t n, std::size_t m, const RegressionRule& rule) {
  return smallest_attainable_p(n, m) >= rule.alpha;
}

nlohmann::json median_or_null(const Samples& samples) {
  return samples.empty() ? nlohmann::json(nullptr) : nlohmann::json(stats::median(samples));
}

nlohmann::json median_change(const Samples& now, const Samples& then) {
  if (now.empty() || then.empty() || stats::median(then) == 0) return nullptr;
  return stats::median(now) / stats::median(then) - 1;
}

EstimateCells speedup(const Samples& reference_times, const Samples& other_times, std::uint64_t seed) {
  if (reference_times.empty() || other_times.empty()) return {};
  return cells(ratio(reference_times, other_times, seed), reference_times, other_times);
}

EstimateCells memory_reduction(const Samples& reference, const Samples& other, std::uint64_t seed) {
  if (reference.empty() || other.empty() || stats::median(reference) <= 0) return {};
  const auto kept = ratio(other, reference, seed);
  return cells({1 - kept.estimate, 1 - kept.high, 1 - kept.low}, reference, other);
}

nlohmann::json break_even_iterations(const Samples& compile_seconds, const Samples& eager_steps,
                                     const Samples& compiled_steps) {
  if (compile_seconds.empty() || eager_steps.empty() || compiled_steps.empty()) return nullptr;
  const double saving = stats::median(eager_steps) - stats::median(compiled_steps);
  if (saving <= 0) return "never";
  return static_cast<int64_t>(std::ceil(stats::median(compile_seconds) / saving));
}

EstimateCells scaling_efficiency(const Samples& throughput, const Samples& one_rank_throughput, double ranks,
                                 std::uint64_t seed) {
  if (throughput.empty() || one_rank_throughput.empty()) return {};
  const auto gain = ratio(throughput, one_rank_throughput, seed);
  return cells({gain.estimate / ranks, gain.low / ranks, gain.high / ranks}, throughput, one_rank_throughput);
}

}  // namespace ts::readers
