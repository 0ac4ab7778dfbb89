#include "agent/node/nvml.hpp"

#include <dlfcn.h>

#include <array>

namespace ts::agent {
namespace {

using Return = int;  // nvmlReturn_t
constexpr Return success = 0;
constexpr Return insufficient_size = 7;
constexpr int clock_sm = 1, clock_memory = 2;              // nvmlClockType_t
constexpr unsigned long long value_not_available = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
constexpr int temperature_gpu = 0;                         // nvmlTemperatureSensors_t

// nvmlProcessInfo_t as the _v3 process queries fill it.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};

template <typename F>
F* symbol(void* library, const char* name, bool required = true) {
  auto* found = reinterpret_cast<F*>(::dlsym(library, name));
  if (found == nullptr && required) throw NvmlUnavailable(std::string("the NVML library lacks ") + name);
  return found;
}

}  // namespace

struct Nvml::Functions {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*driver_version)(char*, unsigned) = nullptr;
  Return (*handle_by_uuid)(const char*, NvmlDevice*) = nullptr;
  Return (*name)(NvmlDevice, char*, unsigned) = nullptr;
  Return (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  Return (*power)(NvmlDevice, unsigned*) = nullptr;
  Return (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  Return (*clock_events)(NvmlDevice, unsigned long long*) = nullptr;
  Return (*processes)(NvmlDevice, unsigned*, ProcessInfo*) = nullptr;
  Return (*persistence_mode)(NvmlDevice, int*) = nullptr;              // optional
  Return (*applications_clock)(NvmlDevice, int, unsigned*) = nullptr;  // optional
  Return (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;   // optional: Volta and later

  std::string what(const std::string& call, Return code) const {
    return "NVML " + call + ": " + (error_string ? error_string(code) : "error " + std::to_string(code));
  }
};

Nvml::Nvml(const std::filesystem::path& library)
    : library_(::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL), [](void* handle) { return ::dlclose(handle); }) {
  if (!library_) {
    const char* error = ::dlerror();
    throw NvmlUnavailable("cannot load " + library.string() + ": " + (error ? error : "unknown error"));
  }
  auto* handle = library_.get();
  functions_ = std::make_unique<Functions>();
  auto& f = *functions_;
  f.init = symbol<Return()>(handle, "nvmlInit_v2");
  f.shutdown = symbol<Return()>(handle, "nvmlShutdown");
  f.error_string = symbol<const char*(Return)>(handle, "nvmlErrorString");
  f.driver_version = symbol<Return(char*, unsigned)>(handle, "nvmlSystemGetDriverVersion");
  f.handle_by_uuid = symbol<Return(const char*, NvmlDevice*)>(handle, "nvmlDeviceGetHandleByUUID");
  f.name = symbol<Return(NvmlDevice, char*, unsigned)>(handle, "nvmlDeviceGetName");
  f.clock = symbol<Return(NvmlDevice, int, unsigned*)>(handle, "nvmlDeviceGetClockInfo");
  f.power = symbol<Return(NvmlDevice, unsigned*)>(handle, "nvmlDeviceGetPowerUsage");
  f.temperature = symbol<Return(NvmlDevice, int, unsigned*)>(handle, "nvmlDeviceGetTemperature");
  // Renamed from "throttle" to "event" reasons in CUDA 12.2; drivers keep both.
  f.clock_events = symbol<Return(NvmlDevice, unsigned long long*)>(handle, "nvmlDeviceGetCurrentClocksEventReasons",
                                                                   /*required=*/false);
  if (f.clock_events == nullptr)
    f.clock_events =
        symbol<Return(NvmlDevice, unsigned long long*)>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  f.processes = symbol<Return(NvmlDevice, unsigned*, ProcessInfo*)>(handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  f.persistence_mode = symbol<Return(NvmlDevice, int*)>(handle, "nvmlDeviceGetPersistenceMode", /*required=*/false);
  f.applications_clock =
      symbol<Return(NvmlDevice, int, unsigned*)>(handle, "nvmlDeviceGetApplicationsClock", /*required=*/false);
  f.total_energy = symbol<Return(NvmlDevice, unsigned long long*)>(handle, "nvmlDeviceGetTotalEnergyConsumption",
                                                                   /*required=*/false);
  if (const auto code = functions_->init(); code != success) throw NvmlUnavailable(functions_->what("init", code));
}

Nvml::~Nvml() {
  if (functions_) functions_->shutdown();
}

std::string Nvml::driver_version() const {
  std::array<char, 96> text{};
  if (const auto code = functions_->driver_version(text.data(), text.size()); code != success)
    throw NvmlUnavailable(functions_->what("driver version", code));
  return text.data();
}

NvmlDevice Nvml::device(const std::string& uuid) const {
  NvmlDevice device = nullptr;
  if (const auto code = functions_->handle_by_uuid(uuid.c_str(), &device); code != success)
    throw NvmlUnavailable(functions_->what("device " + uuid, code));
  return device;
}

std::string Nvml::name(NvmlDevice device) const {
  std::array<char, 96> text{};
  return functions_->name(device, text.data(), text.size()) == success ? text.data() : "";
}

NvmlReading Nvml::read(NvmlDevice device) const {
  NvmlReading reading;
  const auto& f = *functions_;
  unsigned number = 0;
  if (f.clock(device, clock_sm, &number) == success) reading.sm_clock_mhz = number;
  if (f.clock(device, clock_memory, &number) == success) reading.memory_clock_mhz = number;
  if (f.temperature(device, temperature_gpu, &number) == success) reading.temperature_c = number;
  if (f.power(device, &number) == success) reading.power_w = number / 1000.0;  // milliwatts
  unsigned long long millijoules = 0;
  if (f.total_energy && f.total_energy(device, &millijoules) == success) reading.energy_mj = millijoules;
  int enabled = 0;
  if (f.persistence_mode && f.persistence_mode(device, &enabled) == success) reading.persistence_mode = enabled == 1;
  if (f.applications_clock && f.applications_clock(device, clock_sm, &number) == success)
    reading.applications_sm_clock_mhz = number;
  if (f.applications_clock && f.applications_clock(device, clock_memory, &number) == success)
    reading.applications_memory_clock_mhz = number;
  unsigned long long reasons = 0;
  if (f.clock_events(device, &reasons) == success) reading.clock_event_reasons = reasons;
  // The count may grow between the two calls: ask again with the new size.
  std::vector<ProcessInfo> infos(8);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const auto code = f.processes(device, &count, infos.data());
    if (code == insufficient_size) {
      infos.resize(count + 8);
      continue;
    }
    if (code == success) {
      for (unsigned i = 0; i < count; ++i)
        reading.processes.push_back(
            {static_cast<pid_t>(infos[i].pid), infos[i].used_gpu_memory == value_not_available
                                                   ? std::nullopt
                                                   : std::optional<uint64_t>(infos[i].used_gpu_memory)});
    }
    break;
  }
  return reading;
}

}  // namespace ts::agent
