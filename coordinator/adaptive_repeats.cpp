#include "coordinator/adaptive_repeats.hpp"

#include <algorithm>
#include <cmath>

#include "shared/statistics.hpp"

namespace ts::coordinator {

std::string pair_of(const AdaptiveRule& rule, const std::string& config_key) {
  return sweep::pair_key(config_key, rule.compare);
}

bool is_reference(const AdaptiveRule& rule, const std::string& config_key) {
  return !rule.values.empty() &&
         nlohmann::json::parse(config_key).value(rule.compare, nlohmann::json()) == rule.values.front();
}

std::string to_string(AdaptiveDecision::Kind kind) {
  switch (kind) {
    case AdaptiveDecision::Kind::another_round:
      return "running";
    case AdaptiveDecision::Kind::converged:
      return "converged";
    case AdaptiveDecision::Kind::max_reached:
      return "max_reached";
  }
  return "unknown";
}

AdaptiveDecision decide(const AdaptiveRule& rule, int64_t rounds, std::span<const double> reference,
                        std::span<const double> other) {
  AdaptiveDecision decision;
  if (std::min(reference.size(), other.size()) >= stats::minimum_runs_for_interval) {
    // Seeded: the same runs always give the same interval, and so the same stop.
    const auto interval = stats::ratio_of_medians(reference, other);
    decision.half_width = (interval.high - interval.low) / 2.0 / interval.estimate;
  }
  if (rule.power && std::min(reference.size(), other.size()) >= 2) {
    // The runs' spread on the log scale, pooled within the two sides.
    double squares = 0;
    for (const auto side : {reference, other}) {
      double mean = 0;
      for (const double run : side) mean += std::log(run) / static_cast<double>(side.size());
      for (const double run : side) squares += (std::log(run) - mean) * (std::log(run) - mean);
    }
    const double run_sd = std::sqrt(squares / static_cast<double>(reference.size() + other.size() - 2));
    decision.power = detection_power(run_sd, other.size(), reference.size(), rule.slowdown, rule.judge);
  }
  const bool narrow = rule.ci_half_width && decision.half_width && *decision.half_width <= *rule.ci_half_width;
  const bool powerful = rule.power && decision.power && *decision.power >= *rule.power;
  // until.decided: the power alone does not stop a pair the rule cannot judge yet. Judged (a bootstrap) only once
  // the pair could stop, not every round.
  const auto decided = [&] {
    return !rule.decided ||
           judge_slowdown({other.begin(), other.end()}, {reference.begin(), reference.end()}, rule.judge).verdict !=
               Slowdown::undecided;
  };
  if (rounds >= rule.min && (narrow || (powerful && decided()))) {
    decision.kind = AdaptiveDecision::Kind::converged;
  } else if (rounds >= rule.max) {
    decision.kind = AdaptiveDecision::Kind::max_reached;
  }
  return decision;
}

}  // namespace ts::coordinator
