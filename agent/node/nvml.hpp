#pragma once
// NVIDIA's management library, loaded at run time with dlopen: nothing of
// it is needed to build torchsweep, and an agent on a node without a
// driver runs as before (its results then say telemetry "unavailable").
// Only the few calls the GPU telemetry needs (agent/node/gpu_telemetry.hpp) are
// bound; their C signatures are NVML's stable ABI, spelled out here rather
// than taken from nvml.h, which the CUDA toolkit does not always ship.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::agent {

struct NvmlDeviceHandle;  // NVML's opaque nvmlDevice_t
using NvmlDevice = NvmlDeviceHandle*;

// NVML cannot be used here (no library, no driver, no such GPU); what()
// says why.
class NvmlUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One reading of one GPU. A value the device does not report stays empty.
struct NvmlReading {
  std::optional<unsigned> sm_clock_mhz, memory_clock_mhz, temperature_c;
  std::optional<double> power_w;
  std::optional<uint64_t> energy_mj;            // since the driver loaded (Volta and later)
  std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bits
  struct Process {
    pid_t pid;
    std::optional<uint64_t> used_bytes;  // empty: NVML cannot see it (under MIG, or without the permission)
  };
  std::vector<Process> processes;  // compute processes and their device memory
  // Settings that make runs differ (docs/noise.md): whether the driver
  // stays loaded between jobs, and the clocks the applications were pinned to.
  std::optional<bool> persistence_mode;
  std::optional<unsigned> applications_sm_clock_mhz, applications_memory_clock_mhz;
};

class Nvml {
 public:
  // Loads `library` (default: the driver's libnvidia-ml.so.1, found the way
  // dlopen finds it) and initialises it; throws NvmlUnavailable.
  explicit Nvml(const std::filesystem::path& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string driver_version() const;
  // The device of that UUID (as nvidia-smi and the agent's capabilities
  // name it); throws NvmlUnavailable.
  NvmlDevice device(const std::string& uuid) const;
  std::string name(NvmlDevice device) const;
  NvmlReading read(NvmlDevice device) const;

 private:
  struct Functions;
  std::unique_ptr<void, int (*)(void*)> library_;
  std::unique_ptr<Functions> functions_;
};

}  // namespace ts::agent
