#include "coordinator/adaptive_repeats.hpp"

#include <algorithm>

#include "shared/statistics.hpp"

namespace ts::coordinator {

std::optional<AdaptiveRule> AdaptiveRule::from_spec(const nlohmann::json& spec) {
  const auto repeats = spec.find("repeats");
  if (repeats == spec.end() || !repeats->is_object()) return std::nullopt;
  AdaptiveRule rule;
  rule.min = repeats->value("min", rule.min);
  rule.max = repeats->at("max").get<int64_t>();
  const auto& until = repeats->at("until");
  rule.compare = until.at("compare").get<std::string>();
  rule.ci_half_width = until.at("ci_half_width").get<double>();
  rule.values = spec.at("axes").at(rule.compare).get<std::vector<nlohmann::json>>();
  return rule;
}

std::string AdaptiveRule::pair_of(const std::string& config_key) const {
  auto configuration = nlohmann::json::parse(config_key);
  configuration.erase(compare);
  return configuration.dump();
}

bool AdaptiveRule::is_reference(const std::string& config_key) const {
  return !values.empty() && nlohmann::json::parse(config_key).value(compare, nlohmann::json()) == values.front();
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
    const auto interval = stats::ratio_of_medians(reference, other, {0.95, 2000, 0});
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
