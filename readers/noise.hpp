#pragma once
// `torchsweep query --noise` (docs/noise.md): how noisy each configuration
// is, from the results already stored. Each configuration's epoch times are
// split into variance components (shared/variance_components.hpp): from
// epoch to epoch within a process, between processes on one node, and
// between nodes, on the log scale, so that each is a relative spread
// (a coefficient of variation) whatever the configuration's speed.
// Beside them, the measured false-alarm rate of the regression rule
// (`query --baseline`, `nightly`): the configuration's runs, in the order
// they arrived, in blocks of `night_runs`, each block a night judged
// against the block before it as a baseline, pairs disjoint (A/A: nothing
// changed, so every "regressed" is a false alarm).
#include <cstddef>
#include <vector>

#include "readers/comparisons.hpp"
#include "readers/table.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

struct NoiseOptions {
  ResultFilter filter;
  RegressionRule rule;
  // Runs a night: 5, the fewest with which the rule can flag at alpha 0.01
  // (5 against 5 gives p = 0.0079 at best).
  std::size_t night_runs = 5;
};

struct FalseAlarms {
  std::size_t pairs = 0, alarms = 0;
};
// The rule on A/A pairs of `runs` (one figure a run, in the order they
// ran): blocks of `night_runs`, block 2j + 1 judged against block 2j.
FalseAlarms aa_false_alarms(const std::vector<double>& runs, const RegressionRule& rule, std::size_t night_runs);

// The change that a difference of two nights' means of k runs each exceeds
// by chance with probability alpha / 2, for runs whose logs vary by
// `run_variance`: the threshold this noise requires of the rule.
double needed_threshold(double run_variance, std::size_t k, const RegressionRule& rule);
// How often `rule` itself calls a slowdown (0.10: 10%) regressed with k runs a
// side whose logs spread by `run_sd`: a seeded simulation of 2000 nights,
// the same on every call.
double detection_power(double run_sd, std::size_t k, double slowdown, const RegressionRule& rule);

// One row a configuration (query's configuration axes, a column each) among
// the filter's results,
// noisiest first (by run_cv: the spread of one run's mean epoch on one node),
// with the threshold its noise needs and the power to see a 10% slowdown at
// `night_runs` runs a side under the threshold in force (the larger).
Table noise_table(Database& database, const NoiseOptions& options);

}  // namespace ts::readers
