#pragma once
// Variance components of a nested random-effects model, for noise
// calibration (docs/noise.md): a measurement y of one configuration is
//   y = mu + node + process + within,
// the node it ran on, the process (job attempt) on that node, and the
// epoch within that process, each an independent zero-mean effect. The
// estimator is the analysis-of-variance (method of moments) one for
// unbalanced nested designs (Searle, Casella and McCulloch, "Variance
// Components", 1992, section 4.3; Sokal and Rohlf's n0 coefficients): each
// level's mean square set equal to its expectation. A negative estimate is
// reported as 0 and flagged, as is customary.
#include <optional>
#include <span>
#include <vector>

namespace ts::stats {

// One process's measurements, and the node it ran on (any label that
// tells nodes apart).
struct ProcessSample {
  int node = 0;
  std::vector<double> values;
};

struct VarianceComponents {
  // Estimates of the variances; nullopt where the design cannot tell the
  // level (one node: no node component; one process on every node: no
  // process component, and the node component then holds both; one value
  // in every process: no within component).
  std::optional<double> within, process, node;
  // Where an estimate came out negative and was set to 0.
  bool process_truncated = false, node_truncated = false;
  int nodes = 0, processes = 0, values = 0;
  double grand_mean = 0;
  // The variance of one process's mean of `per_process` values, as the
  // components predict it: what a comparison of two runs has to beat.
  double variance_of_a_run_mean(int per_process, bool across_nodes) const;
};

// Throws std::invalid_argument when `processes` is empty or a process has
// no value.
VarianceComponents estimate_variance_components(std::span<const ProcessSample> processes);

}  // namespace ts::stats
