#pragma once
// The "telemetry" section the agent adds to every result it forwards
// (schemas/result.schema.json, docs/gpu-telemetry.md): NVML's view of the
// GPUs the coordinator gave the job, sampled by the agent while the runner
// runs and windowed to the timed epochs by the progress lines every runner
// writes. One sampler for every runner: no runner carries NVML code.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/node/energy_meter.hpp"
#include "agent/node/nvml.hpp"
#include "agent/node/timed_window.hpp"

namespace ts::agent {

class GpuTelemetry {
 public:
  using Clock = TimedWindow::Clock;
  // Whether a process NVML lists on a job's GPU is the job's.
  using JobProcess = std::function<bool(pid_t)>;

  // A job without telemetry; the section says "unavailable" and why.
  static GpuTelemetry unavailable(std::string reason);
  // `gpus`: the capabilities entries of the job's GPUs (index, uuid); throws
  // NvmlUnavailable when NVML does not know one of them.
  GpuTelemetry(std::shared_ptr<const Nvml> nvml, const nlohmann::json& gpus, JobProcess job_process);

  bool available() const noexcept { return nvml_ != nullptr; }
  // Reads every GPU once (a no-op when unavailable).
  void sample(Clock::time_point now);
  // The "telemetry" section over the timed epochs (the whole run without them).
  nlohmann::json summary(const std::optional<TimedWindow::Bounds>& window) const;
  // The "energy" section from the GPUs' energy counters, the same window.
  nlohmann::json energy(const std::optional<TimedWindow::Bounds>& window) const { return energy_.section(window); }

  // Clock event reasons that mean the GPU slowed itself down (thermal,
  // hardware slowdown, power brake). The software power cap is routine at
  // full load and is reported but not counted.
  static bool is_throttling(uint64_t reasons);

 private:
  struct Gpu {
    int64_t index;
    std::string uuid, name;
    NvmlDevice device;
  };
  struct Sample {
    Clock::time_point at;
    std::vector<NvmlReading> readings;  // one per GPU
    // The job's processes' device memory on each GPU, told at the sample:
    // by the summary they have exited. Empty where NVML could not report
    // one of them: that sample has no figure.
    std::vector<std::optional<uint64_t>> job_bytes;
    std::vector<int64_t> other_processes;  // on each GPU: processes that are not the job's
  };
  GpuTelemetry() = default;

  std::shared_ptr<const Nvml> nvml_;
  std::string unavailable_reason_, driver_;
  std::vector<Gpu> gpus_;
  JobProcess job_process_;
  std::vector<Sample> samples_;
  EnergyMeter energy_ = EnergyMeter::absent("the job ran on no GPU");
};

}  // namespace ts::agent
