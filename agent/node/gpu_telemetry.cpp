#include "agent/node/gpu_telemetry.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "shared/statistics.hpp"

namespace ts::agent {
namespace {

// nvmlClocksEventReason* bits and the names the result gives them.
constexpr std::array<std::pair<uint64_t, const char*>, 9> reason_names{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};
constexpr uint64_t throttling_reasons = 0x8 | 0x20 | 0x40 | 0x80;

nlohmann::json spread(std::vector<double> values) {
  if (values.empty()) return nullptr;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return {{"min", *low}, {"median", stats::median(values)}, {"max", *high}};
}

}  // namespace

GpuTelemetry GpuTelemetry::unavailable(std::string reason) {
  GpuTelemetry telemetry;
  telemetry.energy_ = EnergyMeter::absent(reason);
  telemetry.unavailable_reason_ = std::move(reason);
  return telemetry;
}

GpuTelemetry::GpuTelemetry(std::shared_ptr<const Nvml> nvml, const nlohmann::json& gpus, JobProcess job_process)
    : nvml_(std::move(nvml)), driver_(nvml_->driver_version()), job_process_(std::move(job_process)) {
  for (const auto& gpu : gpus) {
    const auto uuid = gpu.value("uuid", "");
    if (uuid.empty()) throw NvmlUnavailable("GPU " + gpu.at("index").dump() + " has no UUID to find it by");
    const auto device = nvml_->device(uuid);
    gpus_.push_back({gpu.at("index").get<int64_t>(), uuid, nvml_->name(device), device});
  }
  std::vector<EnergyDomain> domains;
  for (const auto& gpu : gpus_) domains.push_back({"GPU " + std::to_string(gpu.index), 1e-3, std::nullopt});
  energy_ = EnergyMeter("nvml", std::move(domains));
}

void GpuTelemetry::sample(Clock::time_point now) {
  if (!nvml_) return;
  Sample sample{now, {}, {}, {}};
  std::vector<EnergyMeter::Reading> energy;
  for (const auto& gpu : gpus_) {
    auto& reading = sample.readings.emplace_back(nvml_->read(gpu.device));
    energy.push_back({reading.energy_mj, reading.power_w});
    // The job's processes' memory; unknown when NVML cannot report one of them.
    std::optional<uint64_t> bytes = 0;
    int64_t others = 0;
    for (const auto& process : reading.processes) {
      if (!job_process_(process.pid)) {
        ++others;
        continue;
      }
      bytes = bytes && process.used_bytes ? std::optional<uint64_t>(*bytes + *process.used_bytes) : std::nullopt;
    }
    sample.job_bytes.push_back(bytes);
    sample.other_processes.push_back(others);
  }
  samples_.push_back(std::move(sample));
  energy_.record(now, energy);
}

bool GpuTelemetry::is_throttling(uint64_t reasons) { return (reasons & throttling_reasons) != 0; }

nlohmann::json GpuTelemetry::summary(const std::optional<TimedWindow::Bounds>& bounds) const {
  if (!nvml_) return {{"status", "unavailable"}, {"reason", unavailable_reason_}};
  // The timed epochs when the runner reported them and a sample fell in
  // them; otherwise the whole run (said in "window").
  std::vector<const Sample*> window;
  if (bounds) {
    for (const auto& sample : samples_)
      if (sample.at >= bounds->first && sample.at <= bounds->second) window.push_back(&sample);
  }
  const bool timed = !window.empty();
  if (!timed)
    for (const auto& sample : samples_) window.push_back(&sample);
  nlohmann::json section{{"status", "ok"},
                         {"source", "nvml"},
                         {"driver", driver_},
                         {"window", timed ? "timed_epochs" : "whole_run"},
                         {"samples", window.size()}};
  if (timed) section["window_seconds"] = std::chrono::duration<double>(bounds->second - bounds->first).count();
  bool any_throttled = false;
  section["gpus"] = nlohmann::json::array();
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    std::vector<double> sm, memory, power, temperature, job_bytes;
    uint64_t reasons = 0;
    int64_t others = 0;
    for (const auto* sample : window) {
      others = std::max(others, sample->other_processes[g]);
      const auto& reading = sample->readings[g];
      if (reading.sm_clock_mhz) sm.push_back(*reading.sm_clock_mhz);
      if (reading.memory_clock_mhz) memory.push_back(*reading.memory_clock_mhz);
      if (reading.power_w) power.push_back(*reading.power_w);
      if (reading.temperature_c) temperature.push_back(*reading.temperature_c);
      reasons |= reading.clock_event_reasons.value_or(0);
      if (const auto bytes = sample->job_bytes[g]) job_bytes.push_back(static_cast<double>(*bytes));
    }
    nlohmann::json names = nlohmann::json::array();
    for (const auto& [bit, name] : reason_names)
      if (reasons & bit) names.push_back(name);
    const bool throttled = is_throttling(reasons);
    any_throttled = any_throttled || throttled;
    const auto& last = window.empty() ? NvmlReading{} : window.back()->readings[g];
    nlohmann::json applications_clocks = nullptr;
    if (last.applications_sm_clock_mhz && last.applications_memory_clock_mhz)
      applications_clocks = {{"sm", *last.applications_sm_clock_mhz}, {"memory", *last.applications_memory_clock_mhz}};
    section["gpus"].push_back(
        {{"index", gpus_[g].index},
         {"uuid", gpus_[g].uuid},
         {"name", gpus_[g].name},
         {"sm_clock_mhz", spread(sm)},
         {"memory_clock_mhz", spread(memory)},
         {"power_w", spread(power)},
         {"temperature_c", spread(temperature)},
         {"process_memory_bytes", spread(job_bytes)},
         {"clock_event_reasons", names},
         {"throttled", throttled},
         {"other_processes", others},
         {"persistence_mode", last.persistence_mode ? nlohmann::json(*last.persistence_mode) : nlohmann::json(nullptr)},
         {"applications_clock_mhz", applications_clocks}});
  }
  section["throttled"] = any_throttled;
  return section;
}

}  // namespace ts::agent
