#pragma once
// Step detection on a configuration's nightly history, in the manner of
// asv's (airspeed velocity): the series is taken to be piecewise constant
// plus noise, and the fit minimising
//     gamma * (number of steps) + sum over points of |y - median of its segment|
// (the L1 Potts problem) is found exactly by dynamic programming, every
// segment at least two points long. The penalty gamma scales with a robust
// estimate of the noise; a lone outlier cannot be a segment of its own, so
// it stays residual, while a shift that persists over several points pays
// for its one step.
// docs/report.md gives the rule and its constants.
#include <cstddef>
#include <span>
#include <vector>

namespace ts::readers {

struct ChangePoint {
  std::size_t index = 0;         // first point of the new segment
  double before = 0, after = 0;  // the medians of the segments on either side
  double change() const { return before != 0 ? after / before - 1 : 0; }
};

struct StepDetectionOptions {
  // gamma = penalty_per_log_point * ln(n) * sigma, sigma the noise estimate.
  double penalty_per_log_point = 4.0;
  // Noise below this fraction of the series' median is taken as this
  // fraction: a perfectly flat series does not turn every wobble into a step.
  double noise_floor = 0.002;
  // Steps smaller than this relative change are dropped (segments merged).
  double minimum_change = 0.0;
  std::size_t minimum_points = 4;   // shorter series: no detection
  std::size_t minimum_segment = 2;  // points of the shortest level: one point is an outlier
};

// The robust noise scale of a series: the median absolute difference of
// successive points over sqrt(2), times 1.4826 (normal consistency); steps
// add only one large difference each, so they barely move it.
double successive_noise(std::span<const double> series);

std::vector<ChangePoint> detect_steps(std::span<const double> series, const StepDetectionOptions& options = {});

}  // namespace ts::readers
