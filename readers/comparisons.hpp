#pragma once
// The statistics a query sets beside its medians (docs/query.md): one value
// of an axis against another (speedup, memory reduction), N ranks against
// one (scaling efficiency), and the regression rule against a baseline.
// Intervals are bootstrap intervals of a ratio of medians (shared/statistics);
// below stats::minimum_runs_for_interval runs a side their bounds are null
// (rendered "n too small"): an interval of two runs would claim a precision
// that is not there.
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shared/regression_rule.hpp"

namespace ts::readers {

using Samples = std::vector<double>;
// An estimate and its interval's bounds, as three cells (null when there is
// nothing to estimate).
using EstimateCells = std::array<nlohmann::json, 3>;

// The regression rule (shared/regression_rule.hpp), by its readers' names.
using ts::detection_power;
using ts::judge_change;
using ts::Judgement;
using ts::needed_threshold;
using ts::threshold_in_force;
using ts::RegressionRule;

// The smallest two-sided p-value an exact Mann-Whitney test of n against m
// runs can give: 2 / C(n + m, n).
double smallest_attainable_p(std::size_t n, std::size_t m);
// Whether n runs against m could never give a p-value below the rule's alpha.
bool too_few_runs_to_flag(std::size_t n, std::size_t m, const RegressionRule& rule);

// The median, or null for no runs.
nlohmann::json median_or_null(const Samples& samples);
// median(now) / median(then) - 1, or null when a side is empty or then's median is 0.
nlohmann::json median_change(const Samples& now, const Samples& then);

// The seed makes every interval repeatable.
// reference time / other time.
EstimateCells speedup(const Samples& reference_times, const Samples& other_times, std::uint64_t seed);
// 1 - other / reference.
EstimateCells memory_reduction(const Samples& reference, const Samples& other, std::uint64_t seed);
// A compile's break-even (docs/compiler.md): the iterations after which the
// median compile time is paid back by the median step's saving, rounded
// up: compile / (eager step - compiled step); "never" when the compiled
// step is not faster; null without runs on either side or a compile time.
nlohmann::json break_even_iterations(const Samples& compile_seconds, const Samples& eager_steps,
                                     const Samples& compiled_steps);
// throughput at `ranks` / (ranks x throughput at one rank).
EstimateCells scaling_efficiency(const Samples& throughput, const Samples& one_rank_throughput, double ranks,
                                 std::uint64_t seed);

}  // namespace ts::readers
