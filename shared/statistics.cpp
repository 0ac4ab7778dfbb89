#include "shared/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
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

namespace {

// Draws indexes with a generator whose sequence the C++ standard fixes
// (mt19937_64); the modulo bias is below 1e-15 for samples of any real size.
class Resampler {
 public:
  explicit Resampler(std::uint64_t seed) : engine_(seed) {}
  double median_of_resample(std::span<const double> samples) {
    buffer_.resize(samples.size());
    for (auto& value : buffer_) value = samples[engine_() % samples.size()];
    const auto middle = buffer_.begin() + static_cast<std::ptrdiff_t>(buffer_.size() / 2);
    std::nth_element(buffer_.begin(), middle, buffer_.end());
    if (buffer_.size() % 2 == 1) return *middle;
    return (*middle + *std::max_element(buffer_.begin(), middle)) / 2.0;
  }

 private:
  std::mt19937_64 engine_;
  std::vector<double> buffer_;
};

Interval percentile_interval(std::vector<double> estimates, double point, double level) {
  const double tail = (1.0 - level) / 2.0;
  const auto ordered = sorted(estimates);
  return {point, quantile_of_sorted(ordered, tail), quantile_of_sorted(ordered, 1.0 - tail), level};
}

void check_options(const BootstrapOptions& options) {
  if (options.level <= 0.0 || options.level >= 1.0) throw std::invalid_argument("confidence level outside (0, 1)");
  if (options.resamples < 10) throw std::invalid_argument("too few bootstrap resamples");
}

double standard_normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

Interval bootstrap_median(std::span<const double> samples, const BootstrapOptions& options) {
  require_samples(samples);
  check_options(options);
  Resampler resampler(options.seed);
  std::vector<double> medians(options.resamples);
  for (auto& m : medians) m = resampler.median_of_resample(samples);
  return percentile_interval(std::move(medians), median(samples), options.level);
}

// By bisection on erfc.
double two_sided_z(double level) {
  double low = 0, high = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = (low + high) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > 1 - level ? low : high) = mid;
  }
  return (low + high) / 2;
}

Interval wilson_interval(std::size_t successes, std::size_t trials, double level) {
  if (trials == 0 || successes > trials) throw std::invalid_argument("wilson interval: successes outside [0, trials]");
  if (level <= 0.0 || level >= 1.0) throw std::invalid_argument("confidence level outside (0, 1)");
  const double n = static_cast<double>(trials), p = static_cast<double>(successes) / n, z = two_sided_z(level);
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z / (1 + z * z / n) * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  // The ends exactly at 0 and 1 where they belong, not a rounding away.
  return {p, successes == 0 ? 0.0 : std::max(0.0, centre - half),
          successes == trials ? 1.0 : std::min(1.0, centre + half), level};
}

namespace {

// The standard error of a sample median from the distribution-free
// order-statistic interval: ranks n/2 -+ z*sqrt(n)/2 span about 2z errors.
double median_standard_error(std::span<const double> samples, double z) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  const auto rank = [&](double r) { return static_cast<std::size_t>(std::clamp(r, 0.0, n - 1)); };
  const double low = sorted[rank(std::floor(n / 2 - z * std::sqrt(n) / 2))];
  const double high = sorted[rank(std::ceil(n / 2 + z * std::sqrt(n) / 2))];
  return (high - low) / (2 * z);
}

}  // namespace

Interval ratio_of_medians(std::span<const double> numerator, std::span<const double> denominator,
                          const BootstrapOptions& options) {
  require_samples(numerator);
  require_samples(denominator);
  check_options(options);
  const double bottom = median(denominator);
  if (bottom == 0.0) throw std::invalid_argument("ratio of medians with a zero denominator median");
  if (std::max(numerator.size(), denominator.size()) > options.max_bootstrap_samples) {
    // Large samples: resampling would cost resamples x n per side; the
    // order-statistic errors of both medians, combined on the log scale
    // (delta method), give the interval in O(n log n) instead.
    const double top = median(numerator), z = two_sided_z(options.level);
    const double ratio = top / bottom;
    if (top <= 0 || bottom < 0) return {ratio, ratio, ratio, options.level};
    const double relative =
        std::hypot(median_standard_error(numerator, z) / top, median_standard_error(denominator, z) / bottom);
    return {ratio, ratio * std::exp(-z * relative), ratio * std::exp(z * relative), options.level};
  }
  Resampler resampler(options.seed);
  std::vector<double> ratios;
  ratios.reserve(options.resamples);
  for (std::size_t i = 0; i < options.resamples; ++i) {
    const double top = resampler.median_of_resample(numerator);
    const double under = resampler.median_of_resample(denominator);
    if (under != 0.0) ratios.push_back(top / under);
  }
  if (ratios.empty()) throw std::invalid_argument("every resampled denominator median was zero");
  return percentile_interval(std::move(ratios), median(numerator) / bottom, options.level);
}

Interval difference_of_medians(std::span<const double> minuend, std::span<const double> subtrahend,
                               const BootstrapOptions& options) {
  require_samples(minuend);
  require_samples(subtrahend);
  check_options(options);
  const double difference = median(minuend) - median(subtrahend);
  if (std::max(minuend.size(), subtrahend.size()) > options.max_bootstrap_samples) {
    const double z = two_sided_z(options.level);
    const double error = std::hypot(median_standard_error(minuend, z), median_standard_error(subtrahend, z));
    return {difference, difference - z * error, difference + z * error, options.level};
  }
  Resampler resampler(options.seed);
  std::vector<double> differences;
  differences.reserve(options.resamples);
  for (std::size_t i = 0; i < options.resamples; ++i) {
    const double first = resampler.median_of_resample(minuend);
    differences.push_back(first - resampler.median_of_resample(subtrahend));
  }
  return percentile_interval(std::move(differences), difference, options.level);
}

namespace {

// P(U >= u) under the null hypothesis for samples of sizes m and n without
// ties: the counts of U are the coefficients of the Gaussian binomial
// [m + n choose m](q) = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one
// factor at a time (multiply by 1 - q^(n+i), then divide by 1 - q^i, a
// running sum with stride i). Kept as probabilities: the counts overflow.
double exact_upper_tail(std::size_t m, std::size_t n, double u) {
  if (m > n) std::swap(m, n);
  const std::size_t top = m * n;
  std::vector<double> weight(top + 1, 0.0);
  weight[0] = 1.0;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t k = top; k >= n + i; --k) weight[k] -= weight[k - n - i];
    for (std::size_t k = i; k <= top; ++k) weight[k] += weight[k - i];
    // Scale by i / (n + i) so the weights stay probabilities: C(n+i, i) = C(n+i-1, i-1) (n+i) / i.
    const double scale = static_cast<double>(i) / static_cast<double>(n + i);
    for (auto& w : weight) w *= scale;
  }
  double tail = 0;
  for (std::size_t k = static_cast<std::size_t>(std::ceil(u)); k <= top; ++k) tail += weight[k];
  return tail;
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> first, std::span<const double> second) {
  require_samples(first);
  require_samples(second);
  const double n1 = static_cast<double>(first.size()), n2 = static_cast<double>(second.size());
  std::vector<std::pair<double, int>> pooled;
  for (double x : first) pooled.emplace_back(x, 0);
  for (double y : second) pooled.emplace_back(y, 1);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Mid-ranks for ties; the tie term sum(t^3 - t) corrects the variance.
  double rank_sum_first = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_first += mid_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_first - n1 * (n1 + 1.0) / 2.0;
  // Two-sided, from the larger of U1 and U2 = n1 n2 - U1 (as scipy does).
  const double u_larger = std::max(u, n1 * n2 - u);
  if (tie_term == 0 && std::min(first.size(), second.size()) <= exact_mann_whitney_max_size) {
    return {u, std::min(1.0, 2.0 * exact_upper_tail(first.size(), second.size(), u_larger)), true};
  }
  const double n = n1 + n2;
  const double mean = n1 * n2 / 2.0;
  const double variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (variance <= 0.0) return {u, 1.0, false};  // every value tied: no evidence either way
  const double z = (u_larger - mean - 0.5) / std::sqrt(variance);
  return {u, std::min(1.0, 2.0 * (1.0 - standard_normal_cdf(std::max(z, 0.0)))), false};
}

}  // namespace ts::stats
