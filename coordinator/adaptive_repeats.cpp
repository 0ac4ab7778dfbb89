#include "coordinator/adaptive_repeats.hpp"

#include <algorithm>

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
  if (rounds >= rule.min && decision.half_width && *decision.half_width <= rule.ci_half_width) {
    decision.kind = AdaptiveDecision::Kind::converged;
  } else if (rounds >= rule.max) {
    decision.kind = AdaptiveDecision::Kind::max_reached;
  }
  return decision;
}

}  // namespace ts::coordinator
