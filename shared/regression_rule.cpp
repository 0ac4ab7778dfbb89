#include "shared/regression_rule.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "shared/statistics.hpp"

namespace ts {

Judgement judge_change(const std::vector<double>& now, const std::vector<double>& then, bool higher_is_better,
                       const RegressionRule& rule) {
  const auto test = stats::mann_whitney_u(now, then);
  const double change = stats::median(then) != 0 ? stats::median(now) / stats::median(then) - 1 : 0;
  const double worse = higher_is_better ? -change : change;
  Judgement judgement{test.p_value, "same"};
  if (test.p_value < rule.alpha && worse > rule.threshold) judgement.verdict = "regressed";
  if (test.p_value < rule.alpha && worse < -rule.threshold) judgement.verdict = "improved";
  return judgement;
}

SlowdownJudgement judge_slowdown(const std::vector<double>& now, const std::vector<double>& then,
                                 const RegressionRule& rule, std::uint64_t seed) {
  SlowdownJudgement judged;
  if (now.empty() || then.empty()) return judged;
  const auto change = judge_change(now, then, false, rule);
  judged.p_value = change.p_value;
  if (std::min(now.size(), then.size()) >= stats::minimum_runs_for_interval) {
    stats::BootstrapOptions options;
    options.seed = seed;
    judged.ratio = stats::ratio_of_medians(now, then, options);
  }
  if (change.verdict == "regressed") {
    judged.verdict = Slowdown::slower;
  } else if (judged.ratio && judged.ratio->high < 1 + rule.threshold) {
    judged.verdict = Slowdown::not_slower;
  }
  return judged;
}

double needed_threshold(double run_variance, std::size_t n, std::size_t m, const RegressionRule& rule) {
  const double sides = 1.0 / static_cast<double>(n) + 1.0 / static_cast<double>(m);
  return std::exp(stats::two_sided_z(1 - rule.alpha) * std::sqrt(run_variance * sides)) - 1;
}

double threshold_in_force(const RegressionRule& rule, std::optional<double> run_sd, std::size_t n, std::size_t m) {
  if (!run_sd || n == 0 || m == 0) return rule.threshold;
  return std::max(rule.threshold, needed_threshold(*run_sd * *run_sd, n, m, rule));
}

double detection_power(double run_sd, std::size_t n, std::size_t m, double slowdown, const RegressionRule& rule) {
  std::mt19937_64 random(20261204);
  std::normal_distribution<double> unit;
  constexpr int trials = 2000;
  int detected = 0;
  std::vector<double> now(n), then(m);
  for (int trial = 0; trial < trials; ++trial) {
    for (auto& run : then) run = std::exp(run_sd * unit(random));
    for (auto& run : now) run = (1 + slowdown) * std::exp(run_sd * unit(random));
    if (judge_change(now, then, false, rule).verdict == "regressed") ++detected;
  }
  return static_cast<double>(detected) / trials;
}

}  // namespace ts
