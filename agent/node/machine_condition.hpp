#pragma once
// The condition of the node while a job ran (issue #33, docs/noise.md):
// what makes a node noisy, read by the agent from /proc and /sys around the
// runner, for the "condition" section of every result's context. The
// settings that change how fast a CPU runs (frequency governor, boost, SMT)
// and what the job had to share the node with: other processes' CPU time,
// the hypervisor's steal, memory pressure, the load. A window whose sharing
// passes the limits below is "busy", with the reasons; a job can require a
// quiet one (job field require_quiet_machine).
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace ts::agent {

// Past these a window is busy: the share of the node's CPU time (cpus ×
// the window) that processes other than the agent and its runner used,
// that the hypervisor stole, and the share of the window in which some
// task waited for memory (PSI). Other processes on a job's GPU always make
// it busy.
struct QuietLimits {
  double other_cpu_share = 0.10;
  double steal_share = 0.05;
  double memory_pressure_share = 0.05;
};

class MachineWindow {
 public:
  using Clock = std::chrono::steady_clock;

  // Opens the window at `now`, reading the counters under `root` ("/" but
  // in tests). The agent's own process is /proc/self: its CPU time and that
  // of the children it waited for (the runner, once reaped) are the job's.
  explicit MachineWindow(std::filesystem::path root = "/", Clock::time_point now = Clock::now());

  // The context's "machine" section for the window from the opening to
  // `now` (after the runner was reaped); `telemetry`, the result's GPU
  // telemetry section, tells other processes on the job's GPUs.
  nlohmann::json finish(const nlohmann::json& telemetry, Clock::time_point now = Clock::now(),
                        const QuietLimits& limits = {}) const;

 private:
  struct Counters {
    double busy_s = 0, steal_s = 0, own_s = 0;
    std::optional<double> cpu_stall_s, memory_stall_s;
    std::optional<double> load_1m;
    std::optional<int64_t> memory_available_bytes;
  };
  Counters read() const;

  std::filesystem::path root_;
  Clock::time_point opened_;
  Counters start_;
  int cpus_ = 1;
};

}  // namespace ts::agent
