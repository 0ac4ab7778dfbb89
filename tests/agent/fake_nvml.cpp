// A stand-in for libnvidia-ml.so.1 with the calls agent/node/nvml.cpp binds, for
// the telemetry tests on machines without a GPU. Two GPUs, "GPU-fake-0" and
// "GPU-fake-1"; what they read is set through the fake_nvml_* functions,
// which a test reaches by dlopening this same library, and, for a test of
// agent processes, their clock event reasons from $FAKE_NVML_REASONS. The
// energy counter integrates the power set over real time, unless a test
// pins it (fake_nvml_set_energy).
#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Process {
  unsigned pid;
  unsigned long long bytes;
};

struct Gpu {
  unsigned sm_mhz = 1980, memory_mhz = 2619, temperature_c = 40, power_mw = 100000;
  unsigned long long reasons = 0;
  std::vector<Process> processes;
  double energy_mj = 5e6;
  bool energy_pinned = false;
  std::chrono::steady_clock::time_point energy_at = std::chrono::steady_clock::now();

  // The counter brought to now at the power that held since it was last.
  void advance() {
    const auto now = std::chrono::steady_clock::now();
    if (!energy_pinned) energy_mj += power_mw * std::chrono::duration<double>(now - energy_at).count();
    energy_at = now;
  }
};

struct State {
  int init_result = 0;
  Gpu gpus[2];
  State() {
    if (const char* reasons = std::getenv("FAKE_NVML_REASONS"))
      for (auto& gpu : gpus) gpu.reasons = std::strtoull(reasons, nullptr, 0);
  }
};

State& state() {
  static State instance;  // the fake's whole world, as a C library's is; reset by fake_nvml_reset
  return instance;
}

constexpr int success = 0, invalid_argument = 2, insufficient_size = 7, not_found = 6;

Gpu* gpu_of(void* device) {
  for (auto& gpu : state().gpus)
    if (device == &gpu) return &gpu;
  return nullptr;
}

}  // namespace

extern "C" {

void fake_nvml_reset() { state() = State{}; }
void fake_nvml_fail_init(int code) { state().init_result = code; }
void fake_nvml_set(int gpu, unsigned sm_mhz, unsigned power_mw, unsigned temperature_c, unsigned long long reasons) {
  auto& g = state().gpus[gpu];
  g.advance();
  g.sm_mhz = sm_mhz;
  g.power_mw = power_mw;
  g.temperature_c = temperature_c;
  g.reasons = reasons;
}
void fake_nvml_set_energy(int gpu, unsigned long long millijoules) {
  state().gpus[gpu].energy_pinned = true;
  state().gpus[gpu].energy_mj = static_cast<double>(millijoules);
}
void fake_nvml_add_process(int gpu, unsigned pid, unsigned long long bytes) {
  state().gpus[gpu].processes.push_back({pid, bytes});
}

int nvmlInit_v2() { return state().init_result; }
int nvmlShutdown() { return success; }
const char* nvmlErrorString(int code) {
  switch (code) {
    case 9:
      return "Driver Not Loaded";
    case not_found:
      return "Not Found";
    default:
      return "Unknown Error";
  }
}
int nvmlSystemGetDriverVersion(char* text, unsigned length) {
  std::strncpy(text, "580.65.06-fake", length);
  return success;
}
int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  for (int i = 0; i < 2; ++i) {
    if (std::string(uuid) == "GPU-fake-" + std::to_string(i)) {
      *device = &state().gpus[i];
      return success;
    }
  }
  return not_found;
}
int nvmlDeviceGetName(void* device, char* text, unsigned length) {
  if (!gpu_of(device)) return invalid_argument;
  std::strncpy(text, "Fake H200", length);
  return success;
}
int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  *mhz = type == 1 ? gpu->sm_mhz : gpu->memory_mhz;
  return success;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  *milliwatts = gpu->power_mw;
  return success;
}
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  gpu->advance();
  *millijoules = static_cast<unsigned long long>(gpu->energy_mj);
  return success;
}
int nvmlDeviceGetTemperature(void* device, int, unsigned* celsius) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  *celsius = gpu->temperature_c;
  return success;
}
// Only the old name, as drivers before CUDA 12.2 have it.
int nvmlDeviceGetCurrentClocksThrottleReasons(void* device, unsigned long long* reasons) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  *reasons = gpu->reasons;
  return success;
}
int nvmlDeviceGetPersistenceMode(void* device, int* enabled) {
  if (!gpu_of(device)) return invalid_argument;
  *enabled = 1;
  return success;
}
int nvmlDeviceGetApplicationsClock(void* device, int type, unsigned* mhz) {
  if (!gpu_of(device)) return invalid_argument;
  *mhz = type == 1 ? 1755 : 2619;
  return success;
}
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned* count, ProcessInfo* infos) {
  auto* gpu = gpu_of(device);
  if (!gpu) return invalid_argument;
  const auto have = static_cast<unsigned>(gpu->processes.size());
  if (*count < have) {
    *count = have;
    return insufficient_size;
  }
  for (unsigned i = 0; i < have; ++i) infos[i] = {gpu->processes[i].pid, gpu->processes[i].bytes, 0, 0};
  *count = have;
  return success;
}

}  // extern "C"
