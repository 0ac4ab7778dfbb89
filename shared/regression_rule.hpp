#pragma once
// The regression rule every verdict of torchsweep uses (docs/query.md,
// docs/noise.md): `query --baseline`, `nightly`, `confirm` and the report
// judge by it, `query --noise` measures its false alarms, and adaptive
// repeats may run until it has the power asked for. Shared by the readers
// and the coordinator, so that there is one rule.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shared/statistics.hpp"

namespace ts {

// A group regressed when the Mann-Whitney test of its runs against the
// baseline's gives p below `alpha` and its median moved the worse way by
// more than `threshold`.
struct RegressionRule {
  double alpha = 0.01;
  double threshold = 0.05;
  // The tag of the sweeps whose runs calibrate each configuration's noise
  // (torchsweep calibrate tags its sweeps so): a calibrated configuration's
  // threshold is the larger of `threshold` and what its noise requires
  // (docs/noise.md). Empty: `threshold` alone.
  std::string calibration_tag = "calibration";
};

struct Judgement {
  double p_value = 1;
  std::string verdict;  // "regressed", "improved" or "same"
};

// `now` against `then` (neither empty) by `rule`; `higher_is_better` says
// which way is worse.
Judgement judge_change(const std::vector<double>& now, const std::vector<double>& then, bool higher_is_better,
                       const RegressionRule& rule);

// Whether `now` (a time: lower is better) is slower than `then` by more than
// the rule's threshold, as a bisection judges a step (docs/bisect.md) and
// adaptive repeats `until.decided` wait for (docs/sweeps.md): slower when the
// rule calls it regressed; not slower when the 95% interval of the ratio of
// their medians (now over then, seeded by `seed`; from
// stats::minimum_runs_for_interval runs a side) lies wholly below 1 +
// threshold; else undecided.
enum class Slowdown { slower, not_slower, undecided };
struct SlowdownJudgement {
  Slowdown verdict = Slowdown::undecided;
  double p_value = 1;
  std::optional<stats::Interval> ratio;
};
SlowdownJudgement judge_slowdown(const std::vector<double>& now, const std::vector<double>& then,
                                 const RegressionRule& rule, std::uint64_t seed = 0);

// The change that the difference of two nights' means of n and m runs
// exceeds by chance with probability alpha / 2, for runs whose logs vary by
// `run_variance`: the threshold this noise requires of the rule.
double needed_threshold(double run_variance, std::size_t n, std::size_t m, const RegressionRule& rule);
// The threshold the rule applies to n runs against m of a configuration
// whose runs' logs spread by `run_sd` (a calibration's): the rule's, or what
// that noise needs where larger; the rule's alone without a calibration.
double threshold_in_force(const RegressionRule& rule, std::optional<double> run_sd, std::size_t n, std::size_t m);
// How often `rule` itself calls a slowdown (a fraction: 0.1 is 10%)
// regressed with n runs against m whose logs spread by `run_sd`: a seeded
// simulation of 2000 nights, the same on every call.
double detection_power(double run_sd, std::size_t n, std::size_t m, double slowdown, const RegressionRule& rule);

// The slowdown the tables state the rule's power for (their power_10pct
// column: query --baseline on calibrated configurations, query --noise).
inline constexpr double stated_power_slowdown = 0.10;

}  // namespace ts
