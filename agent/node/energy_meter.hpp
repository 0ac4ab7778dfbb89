#pragma once
// A job's energy from the devices' own cumulative counters: NVML's total
// energy of each GPU, the kernel's powercap (RAPL) counter of each CPU
// package. The agent reads them with its other samples while the runner
// runs; the section windows them to the timed epochs (agent/node/timed_window.hpp)
// and checks them against the integral of the sampled power where the
// device reports one (docs/methodology.md, "What a result's energy is").
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/node/timed_window.hpp"

namespace ts::agent {

// One counter: a GPU, a CPU package.
struct EnergyDomain {
  std::string name;        // "GPU 0", "package-0"
  double joules_per_unit;  // 1e-3 for NVML's millijoules, 1e-6 for RAPL's microjoules
  // The largest value before the counter starts again at 0 (RAPL's
  // max_energy_range_uj); none: it wraps only past 2^64.
  std::optional<uint64_t> wraps_after;
};

class EnergyMeter {
 public:
  using Clock = TimedWindow::Clock;
  struct Reading {
    std::optional<uint64_t> counter;  // in the domain's units; none: not readable this time
    std::optional<double> power_w;    // the device's own instantaneous figure, where it has one
  };

  // A job without an energy figure; the section says "absent" and why.
  static EnergyMeter absent(std::string reason);
  // `source`: "nvml" or "rapl".
  EnergyMeter(std::string source, std::vector<EnergyDomain> domains);

  bool available() const noexcept { return !series_.empty(); }
  // One reading per domain, in the order given.
  void record(Clock::time_point at, const std::vector<Reading>& readings);
  // The result's "energy" section (schemas/result.schema.json).
  nlohmann::json section(const std::optional<TimedWindow::Bounds>& window) const;

 private:
  struct Point {
    Clock::time_point at;
    double value;  // joules since the first reading (the counter unwrapped), or watts
  };
  struct Series {
    EnergyDomain domain;
    std::vector<Point> energy, power;
    std::optional<uint64_t> last_counter;
    int64_t wraps = 0;
  };
  EnergyMeter() = default;

  std::string source_, absent_reason_;
  std::vector<Series> series_;
};

}  // namespace ts::agent
