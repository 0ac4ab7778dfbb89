#include "shared/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ts::stats {
namespace {

void require_samples(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample");
}

std::vector<double> sorted(std::span<const double> samples) {
  std::vector<double> copy(samples.begin(), samples.end());
  std::sort(copy.begin(), copy.end());
  return copy;
}

double quantile_of_sorted(const std::vector<double>& ordered, double q) {
  if (q < 0.0 || q > 1.0) throw std::invalid_argument("quantile outside [0, 1]");
  const double position = q * static_cast<double>(ordered.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, ordered.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return ordered[below] + fraction * (ordered[above] - ordered[below]);
}

}  // namespace

double mean(std::span<const double> samples) {
  require_samples(samples);
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(std::span<const double> samples) {
  const double m = mean(samples);
  if (samples.size() < 2) return 0.0;
  double sum = 0.0;
  for (double x : samples) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(samples.size() - 1));
}

double coefficient_of_variation(std::span<const double> samples) {
  const double m = mean(samples);
  return m == 0.0 ? 0.0 : stddev(samples) / m;
}

double quantile(std::span<const double> samples, double q) {
  require_samples(samples);
  return quantile_of_sorted(sorted(samples), q);
}

double median(std::span<const double> samples) { return quantile(samples, 0.5); }

double iqr(std::span<const double> samples) {
  require_samples(samples);
  const auto ordered = sorted(samples);
  return quantile_of_sorted(ordered, 0.75) - quantile_of_sorted(ordered, 0.25);
}

double mad(std::span<const double> samples) {
  const double center = median(samples);
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::abs(x - center));
  return median(deviations);
}

Summary summarize(std::span<const double> samples) {
  require_samples(samples);
  const auto ordered = sorted(samples);
  Summary s;
  s.count = ordered.size();
  s.mean = mean(samples);
  s.stddev = stddev(samples);
  s.min = ordered.front();
  s.max = ordered.back();
  s.median = quantile_of_sorted(ordered, 0.5);
  s.p25 = quantile_of_sorted(ordered, 0.25);
  s.p75 = quantile_of_sorted(ordered, 0.75);
  s.p90 = quantile_of_sorted(ordered, 0.90);
  s.p99 = quantile_of_sorted(ordered, 0.99);
  s.iqr = s.p75 - s.p25;
  s.cv = s.mean == 0.0 ? 0.0 : s.stddev / s.mean;
  return s;
}

}  // namespace ts::stats
