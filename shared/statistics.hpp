#pragma once
// Descriptive statistics over samples of timings. Every function takes the
// samples by value or span and never reorders the caller's data. An empty
// sample throws std::invalid_argument.
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

}  // namespace ts::stats
