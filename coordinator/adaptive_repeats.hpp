#pragma once
// Adaptive repeats (docs/sweeps.md): a sweep may say
//   repeats: {min: 3, max: 20, until: {compare: mode, ci_half_width: 0.02}}
// (or until: {compare: mode, power: 0.9, slowdown: 0.05}: until the
// regression rule would see a 5% slowdown nine times in ten, docs/noise.md)
// and the coordinator keeps adding rounds of each compared pair (the
// configurations that differ only in the `compare` axis) until the 95%
// interval of their speedup (ratio of median epoch times) is within
// ±ci_half_width of the estimate, or `max` rounds ran. The rule is judged
// after each complete round of a pair only, so where it stops does not
// depend on the order results arrive. Pure decisions; the JobRegistry adds
// the runs (its one mechanism for adding runs to a sweep).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shared/sweep/sweep.hpp"

namespace ts::coordinator {

// The rule as the sweep states it (parsed once, shared/sweep/sweep.hpp).
using AdaptiveRule = sweep::AdaptiveRepeats;

// The pair a configuration belongs to: its config key without the compared axis.
std::string pair_of(const AdaptiveRule& rule, const std::string& config_key);
// Whether the configuration is the pair's reference side (the first value).
bool is_reference(const AdaptiveRule& rule, const std::string& config_key);

struct AdaptiveDecision {
  enum class Kind { another_round, converged, max_reached };
  Kind kind = Kind::another_round;
  std::optional<double> half_width;  // relative; none while a side has too few runs for an interval
  // until.power: the rule's power to see until.slowdown at the pair's runs
  // and measured spread; none while a side has fewer than two runs.
  std::optional<double> power;
};

std::string to_string(AdaptiveDecision::Kind kind);

// After `rounds` complete rounds of a pair, with the runs' median epoch
// times of its reference and other side.
AdaptiveDecision decide(const AdaptiveRule& rule, int64_t rounds, std::span<const double> reference,
                        std::span<const double> other);

}  // namespace ts::coordinator
