#pragma once
// Descriptive statistics over samples of timings. Every function takes the
// samples by value or span and never reorders the caller's data. An empty
// sample throws std::invalid_argument.
#include <cstdint>
#include <span>
#include <vector>

namespace ts::stats {

double mean(std::span<const double> samples);
// Sample standard deviation (n - 1 in the denominator); 0 for one sample.
double stddev(std::span<const double> samples);
// Coefficient of variation: stddev / mean.
double coefficient_of_variation(std::span<const double> samples);
// Quantile q in [0, 1] with linear interpolation between order statistics
// (Hyndman & Fan type 7, the default of numpy and R).
double quantile(std::span<const double> samples, double q);
double median(std::span<const double> samples);
// Interquartile range: quantile(0.75) - quantile(0.25).
double iqr(std::span<const double> samples);
// Median absolute deviation from the median (unscaled).
double mad(std::span<const double> samples);

struct Summary {
  std::size_t count = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  double median = 0, p25 = 0, p75 = 0, p90 = 0, p99 = 0;
  double iqr = 0, cv = 0;
};
Summary summarize(std::span<const double> samples);

struct Interval {
  double estimate = 0, low = 0, high = 0;
  double level = 0.95;
};

struct BootstrapOptions {
  double level = 0.95;  // two-sided confidence level
  std::size_t resamples = 2000;
  std::uint64_t seed = 0;  // same seed, same interval, on every platform
  // ratio_of_medians: above this many samples on a side, the interval comes
  // from order statistics and the delta method instead of resampling.
  std::size_t max_bootstrap_samples = 1000;
};

// Percentile-bootstrap confidence interval of the median.
Interval bootstrap_median(std::span<const double> samples, const BootstrapOptions& options = {});

// median(numerator) / median(denominator), e.g. eager time over compiled time
// (a speedup), with a percentile-bootstrap interval resampling both sides
// independently (with more than max_bootstrap_samples on a side: each
// median's order-statistic standard error, combined on the log scale).
// Throws std::invalid_argument when median(denominator) is 0.
Interval ratio_of_medians(std::span<const double> numerator, std::span<const double> denominator,
                          const BootstrapOptions& options = {});

// median(minuend) - median(subtrahend), e.g. a slower step's time less a
// faster one's, with the interval resampled (or, for large samples,
// approximated) as ratio_of_medians does.
Interval difference_of_medians(std::span<const double> minuend, std::span<const double> subtrahend,
                               const BootstrapOptions& options = {});

struct MannWhitney {
  double u = 0;        // U statistic of the first sample (as scipy.stats.mannwhitneyu reports it)
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact distribution of U, not the normal approximation
};

// Up to this many values in the smaller sample (and no ties) the p-value is exact.
inline constexpr std::size_t exact_mann_whitney_max_size = 8;

// Mann-Whitney U test, two-sided, as scipy.stats.mannwhitneyu with its
// default method="auto": the exact distribution of U when the smaller
// sample has at most 8 values and nothing is tied; otherwise the normal
// approximation with tie and continuity corrections. 5 runs against 5,
// fully separated, give p = 2/252 = 0.0079.
MannWhitney mann_whitney_u(std::span<const double> first, std::span<const double> second);

// z with P(|Z| <= z) = level for a standard normal Z.
double two_sided_z(double level);

// A proportion's Wilson score interval: `successes` of `trials` (trials > 0),
// two-sided at `level`. Stays inside [0, 1] and is not degenerate at 0 or
// `trials` successes, where the textbook normal interval is.
Interval wilson_interval(std::size_t successes, std::size_t trials, double level = 0.95);

// Below this many runs on either side an interval is not reported: the
// percentile bootstrap of a few values spans little more than their range,
// a precision that is not there (docs/query.md).
inline constexpr std::size_t minimum_runs_for_interval = 5;

}  // namespace ts::stats
