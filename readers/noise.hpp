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
#include <optional>
#include <string>
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

// `confirm`'s rule on A/A triples of `runs`: blocks of `night_runs`,
// disjoint triples (baseline, night, rerun); an alarm when the night is
// regressed against the baseline and so are its reruns (a confirmed
// regression where nothing changed).
FalseAlarms confirm_false_alarms(const std::vector<double>& runs, const RegressionRule& rule, std::size_t night_runs);
// The report's change points on an A/A history: each block of `night_runs`
// a night, its median a point; pairs counts the nights after the first,
// alarms the steps detected slower by more than the threshold.
FalseAlarms change_point_false_alarms(const std::vector<double>& runs, const RegressionRule& rule,
                                      std::size_t night_runs);

// A configuration a calibration measured: its configuration axes' values
// (configuration_axes() order) and the spread of one run's mean epoch on
// one node (run_cv, log scale).
struct CalibratedConfiguration {
  std::vector<nlohmann::json> axes;
  double run_sd = 0;
};
// The configurations that the sweeps tagged `tag` ran in two processes or
// more (fewer say nothing of the noise between runs).
std::vector<CalibratedConfiguration> calibrated_configurations(Database& database, const std::string& tag);
// The largest run spread among the calibrated configurations that agree
// with a group's key on the group's configuration axes; none if none does.
std::optional<double> calibrated_spread(const std::vector<CalibratedConfiguration>& calibrated,
                                        const std::vector<std::string>& group_axes,
                                        const std::vector<nlohmann::json>& key);

// One row a configuration (query's configuration axes, a column each) among
// the filter's results,
// noisiest first (by run_cv: the spread of one run's mean epoch on one node),
// with the threshold its noise needs and the power to see a 10% slowdown at
// `night_runs` runs a side under the threshold in force (the larger).
Table noise_table(Database& database, const NoiseOptions& options);

// The noise table's rows as the store records a calibration
// (Store::record_calibration): `configuration`, an object of the axes with
// a value, beside the figures.
std::vector<nlohmann::json> calibration_records(const Table& noise);
// The calibrations `torchsweep calibrate` recorded, newest first, one row
// a configuration: when, the sweep, its rounds, hosts and environments,
// the configuration and its figures (docs/noise.md).
Table calibrations_table(Database& database);

}  // namespace ts::readers
