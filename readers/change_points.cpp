#include "readers/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "shared/statistics.hpp"

namespace ts::readers {

double successive_noise(std::span<const double> series) {
  if (series.size() < 2) return 0;
  std::vector<double> differences;
  for (std::size_t i = 1; i < series.size(); ++i) differences.push_back(std::abs(series[i] - series[i - 1]));
  return 1.4826 * stats::median(differences) / std::sqrt(2.0);
}

namespace {

// Sum of |y - median| over series[begin, end).
double l1_cost(std::span<const double> series, std::size_t begin, std::size_t end) {
  const auto segment = series.subspan(begin, end - begin);
  const double centre = stats::median(segment);
  double cost = 0;
  for (double y : segment) cost += std::abs(y - centre);
  return cost;
}

}  // namespace

std::vector<ChangePoint> detect_steps(std::span<const double> series, const StepDetectionOptions& options) {
  const std::size_t n = series.size();
  if (n < std::max<std::size_t>(options.minimum_points, 2)) return {};
  const double level = std::abs(stats::median(series));
  const double sigma = std::max(successive_noise(series), options.noise_floor * level);
  if (sigma <= 0) return {};
  const double gamma = options.penalty_per_log_point * std::log(static_cast<double>(n)) * sigma;

  // best[e]: the least cost of series[0, e); start[e]: where its last segment begins.
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> start(n + 1, 0);
  best[0] = -gamma;  // the first segment pays no step
  const std::size_t shortest = std::max<std::size_t>(options.minimum_segment, 1);
  for (std::size_t end = shortest; end <= n; ++end) {
    for (std::size_t begin = 0; begin + shortest <= end; ++begin) {
      if (best[begin] == std::numeric_limits<double>::infinity()) continue;  // no fit ends there
      const double cost = best[begin] + gamma + l1_cost(series, begin, end);
      if (cost < best[end]) {
        best[end] = cost;
        start[end] = begin;
      }
    }
  }
  std::vector<std::size_t> bounds;  // segment starts, last first
  for (std::size_t end = n; end > 0; end = start[end]) bounds.push_back(start[end]);
  std::reverse(bounds.begin(), bounds.end());
  bounds.push_back(n);

  // Merge steps below the minimum change into their left neighbour.
  std::vector<std::size_t> kept{0};
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s) {
    const double before = stats::median(series.subspan(kept.back(), bounds[s] - kept.back()));
    const double after = stats::median(series.subspan(bounds[s], bounds[s + 1] - bounds[s]));
    if (before != 0 && std::abs(after / before - 1) < options.minimum_change) continue;
    kept.push_back(bounds[s]);
  }
  kept.push_back(n);
  std::vector<ChangePoint> steps;
  for (std::size_t s = 1; s + 1 < kept.size(); ++s) {
    steps.push_back({kept[s], stats::median(series.subspan(kept[s - 1], kept[s] - kept[s - 1])),
                     stats::median(series.subspan(kept[s], kept[s + 1] - kept[s]))});
  }
  return steps;
}

}  // namespace ts::readers
