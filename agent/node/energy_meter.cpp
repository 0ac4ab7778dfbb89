#include "agent/node/energy_meter.hpp"

#include <algorithm>
#include <utility>

namespace ts::agent {
namespace {

using Clock = EnergyMeter::Clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// A series' value at `at` (within its first and last points), linear between neighbours.
template <typename Points>
double value_at(const Points& points, Clock::time_point at) {
  const auto after = std::lower_bound(points.begin(), points.end(), at,
                                      [](const auto& point, Clock::time_point t) { return point.at < t; });
  if (after == points.begin()) return after->value;
  if (after == points.end()) return points.back().value;
  const auto before = std::prev(after);
  const double span = seconds_between(before->at, after->at);
  if (span <= 0) return after->value;
  return before->value + (after->value - before->value) * seconds_between(before->at, at) / span;
}

// The trapezoid integral of a power series between two instants within it.
template <typename Points>
double integral(const Points& points, Clock::time_point from, Clock::time_point to) {
  double joules = 0;
  auto previous_at = from;
  auto previous_watts = value_at(points, from);
  for (const auto& point : points) {
    if (point.at <= from) continue;
    if (point.at >= to) break;
    joules += (previous_watts + point.value) / 2 * seconds_between(previous_at, point.at);
    previous_at = point.at;
    previous_watts = point.value;
  }
  return joules + (previous_watts + value_at(points, to)) / 2 * seconds_between(previous_at, to);
}

}  // namespace

EnergyMeter EnergyMeter::absent(std::string reason) {
  EnergyMeter meter;
  meter.absent_reason_ = std::move(reason);
  return meter;
}

EnergyMeter::EnergyMeter(std::string source, std::vector<EnergyDomain> domains) : source_(std::move(source)) {
  for (auto& domain : domains) series_.push_back({std::move(domain), {}, {}, std::nullopt, 0});
}

void EnergyMeter::record(Clock::time_point at, const std::vector<Reading>& readings) {
  for (std::size_t d = 0; d < series_.size() && d < readings.size(); ++d) {
    auto& series = series_[d];
    if (const auto power = readings[d].power_w) series.power.push_back({at, *power});
    const auto counter = readings[d].counter;
    if (!counter) continue;
    if (!series.last_counter) {
      series.energy.push_back({at, 0.0});
    } else {
      const auto previous = *series.last_counter;
      uint64_t units = *counter - previous;  // modulo 2^64: a 64-bit counter's wrap
      if (*counter < previous) {
        ++series.wraps;
        if (series.domain.wraps_after) units = *series.domain.wraps_after - previous + *counter;
      }
      series.energy.push_back(
          {at, series.energy.back().value + static_cast<double>(units) * series.domain.joules_per_unit});
    }
    series.last_counter = counter;
  }
}

nlohmann::json EnergyMeter::section(const std::optional<TimedWindow::Bounds>& window) const {
  if (series_.empty()) return {{"status", "absent"}, {"reason", absent_reason_}};
  // The timed epochs where the counters were read on both sides of some of
  // them; otherwise the whole run, as the telemetry does (said in "window").
  bool timed = window.has_value();
  for (const auto& series : series_) {
    if (series.energy.empty())
      return {{"status", "absent"},
              {"reason", "the " + source_ + " energy counter of " + series.domain.name + " cannot be read"}};
    if (series.energy.size() < 2) {
      return {{"status", "absent"},
              {"reason", "one reading of the " + source_ + " counter of " + series.domain.name + " while the job ran"}};
    }
    const auto first = series.energy.front().at, last = series.energy.back().at;
    if (first >= last)
      return {{"status", "absent"}, {"reason", "the readings of " + series.domain.name + " span no time"}};
    if (timed && std::max(first, window->first) >= std::min(last, window->second)) timed = false;
  }
  nlohmann::json domains = nlohmann::json::array();
  double joules = 0, window_seconds = 0;
  std::optional<double> power_joules = 0.0;
  int64_t wraps = 0;
  for (const auto& series : series_) {
    const auto first = series.energy.front().at, last = series.energy.back().at;
    const auto from = timed ? std::max(first, window->first) : first;
    const auto to = timed ? std::min(last, window->second) : last;
    window_seconds = timed ? seconds_between(window->first, window->second) : seconds_between(first, last);
    // The counter's average power over the part of the window it covers, for the whole window.
    const double covered_seconds = seconds_between(from, to);
    const double average_w = (value_at(series.energy, to) - value_at(series.energy, from)) / covered_seconds;
    nlohmann::json power = nullptr;
    if (series.power.size() >= 2 && series.power.front().at <= from && series.power.back().at >= to) {
      power = integral(series.power, from, to) / covered_seconds * window_seconds;
      *power_joules += power.get<double>();
    } else {
      power_joules.reset();
    }
    joules += average_w * window_seconds;
    wraps += series.wraps;
    domains.push_back({{"name", series.domain.name},
                       {"joules", average_w * window_seconds},
                       {"average_power_w", average_w},
                       {"covered_seconds", covered_seconds},
                       {"power_integral_joules", power},
                       {"counter_wraps", series.wraps}});
  }
  return {{"status", "ok"},
          {"source", source_},
          {"window", timed ? "timed_epochs" : "whole_run"},
          {"seconds", window_seconds},
          {"joules", joules},
          {"average_power_w", window_seconds > 0 ? nlohmann::json(joules / window_seconds) : nlohmann::json(nullptr)},
          {"power_integral_joules", power_joules ? nlohmann::json(*power_joules) : nlohmann::json(nullptr)},
          {"counter_wraps", wraps},
          {"domains", domains}};
}

}  // namespace ts::agent
