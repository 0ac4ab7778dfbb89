// The GPU telemetry against a fake NVML (tests/agent/fake_nvml.cpp): what
// the result's "telemetry" section says, windowed to the timed epochs, the
// job's own processes only, throttling told from the power cap, and NVML
// that cannot be had reported with its reason.
#include "agent/node/gpu_telemetry.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "agent/node/nvml.hpp"
#include "agent/node/process_tree.hpp"

namespace ts::agent {
namespace {

using namespace std::chrono_literals;
using Clock = GpuTelemetry::Clock;

// The fake's own controls, from the same library the Nvml class loads.
class FakeNvml {
 public:
  FakeNvml() : library_(::dlopen(TS_FAKE_NVML, RTLD_NOW | RTLD_LOCAL), [](void* h) { return ::dlclose(h); }) {
    if (!library_) throw std::runtime_error(::dlerror());
    reset = bind<void()>("fake_nvml_reset");
    fail_init = bind<void(int)>("fake_nvml_fail_init");
    set = bind<void(int, unsigned, unsigned, unsigned, unsigned long long)>("fake_nvml_set");
    add_process = bind<void(int, unsigned, unsigned long long)>("fake_nvml_add_process");
    set_energy = bind<void(int, unsigned long long)>("fake_nvml_set_energy");
    reset();
  }
  void (*reset)();
  void (*fail_init)(int);
  void (*set)(int gpu, unsigned sm_mhz, unsigned power_mw, unsigned temperature_c, unsigned long long reasons);
  void (*add_process)(int gpu, unsigned pid, unsigned long long bytes);
  void (*set_energy)(int gpu, unsigned long long millijoules);  // pins the counter

 private:
  template <typename F>
  F* bind(const char* name) {
    return reinterpret_cast<F*>(::dlsym(library_.get(), name));
  }
  std::unique_ptr<void, int (*)(void*)> library_;
};

const nlohmann::json one_gpu = nlohmann::json::array({{{"index", 0}, {"uuid", "GPU-fake-0"}}});
const nlohmann::json two_gpus =
    nlohmann::json::array({{{"index", 0}, {"uuid", "GPU-fake-0"}}, {{"index", 1}, {"uuid", "GPU-fake-1"}}});
constexpr pid_t job_pid = 4242, other_pid = 777;
bool is_job(pid_t pid) { return pid == job_pid; }

TEST(GpuTelemetry, SummarisesTheTimedEpochsOnlyAndTheJobsOwnProcesses) {
  FakeNvml fake;
  fake.add_process(0, job_pid, 3ull << 30);
  fake.add_process(0, other_pid, 1ull << 30);  // someone else's process on the GPU
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), one_gpu, is_job);
  const auto start = Clock::now();
  TimedWindow window;
  fake.set(0, 345, 90000, 35, 0x1);  // idle before the timed epochs: not counted
  telemetry.sample(start);
  fake.set(0, 1980, 650000, 61, 0x4);  // at the power cap while timed
  for (int i = 1; i <= 10; ++i) telemetry.sample(start + i * 100ms);
  window.epoch_finished(start + 600ms, 0.5);  // epoch 1: 0.1 s .. 0.6 s
  window.epoch_finished(start + 1000ms, 0.4);
  fake.set(0, 345, 90000, 40, 0x1);  // the loader pass and teardown after: not counted
  telemetry.sample(start + 1200ms);

  const auto section = telemetry.summary(window.bounds());
  EXPECT_EQ(section.at("status"), "ok");
  EXPECT_EQ(section.at("driver"), "580.65.06-fake");
  EXPECT_EQ(section.at("window"), "timed_epochs");
  EXPECT_EQ(section.at("samples"), 10);
  EXPECT_NEAR(section.at("window_seconds").get<double>(), 0.9, 1e-9);
  const auto& gpu = section.at("gpus").at(0);
  EXPECT_EQ(gpu.at("uuid"), "GPU-fake-0");
  EXPECT_EQ(gpu.at("name"), "Fake H200");
  EXPECT_EQ(gpu.at("sm_clock_mhz"), (nlohmann::json{{"min", 1980.0}, {"median", 1980.0}, {"max", 1980.0}}));
  EXPECT_DOUBLE_EQ(gpu.at("power_w").at("max").get<double>(), 650.0);
  EXPECT_DOUBLE_EQ(gpu.at("temperature_c").at("min").get<double>(), 61.0);
  EXPECT_DOUBLE_EQ(gpu.at("process_memory_bytes").at("max").get<double>(), 3.0 * (1ull << 30));
  EXPECT_EQ(gpu.at("clock_event_reasons"), nlohmann::json::array({"sw_power_cap"}));
  EXPECT_FALSE(gpu.at("throttled").get<bool>()) << "the software power cap is routine at full load";
  EXPECT_FALSE(section.at("throttled").get<bool>());
  // The machine's condition on the GPU (docs/noise.md): the other process, and the settings.
  EXPECT_EQ(gpu.at("other_processes"), 1);
  EXPECT_EQ(gpu.at("persistence_mode"), true);
  EXPECT_EQ(gpu.at("applications_clock_mhz"), (nlohmann::json{{"sm", 1755}, {"memory", 2619}}));
}

// The summary is made after the job ended, when its processes are gone:
// whose a process is must be told while it lives, at each sample.
TEST(GpuTelemetry, AProcessIsCountedAsTheJobsWhileItLivesNotWhenTheSummaryIsMade) {
  FakeNvml fake;
  fake.add_process(0, job_pid, 2ull << 30);
  auto alive = std::make_shared<bool>(true);
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), one_gpu,
                         [alive](pid_t pid) { return *alive && pid == job_pid; });
  const auto start = Clock::now();
  TimedWindow window;
  telemetry.sample(start + 100ms);
  window.epoch_finished(start + 200ms, 0.2);
  *alive = false;  // the runner has exited
  EXPECT_DOUBLE_EQ(
      telemetry.summary(window.bounds()).at("gpus").at(0).at("process_memory_bytes").at("max").get<double>(),
      2.0 * (1ull << 30));
  EXPECT_EQ(telemetry.summary(window.bounds()).at("gpus").at(0).at("other_processes"), 0)
      << "the exited runner is not another's";
}

// NVML reports a process's memory as NVML_VALUE_NOT_AVAILABLE (all ones)
// where it cannot see it (under MIG, or without the permission): no figure
// for that sample, not 18 EiB.
TEST(GpuTelemetry, AProcessMemoryNvmlCannotReportIsLeftOutNotSummedAsAllOnes) {
  FakeNvml fake;
  fake.add_process(0, job_pid, ~0ull);
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), one_gpu,
                         [](pid_t pid) { return pid == job_pid || pid == job_pid + 1; });
  const auto start = Clock::now();
  TimedWindow window;
  telemetry.sample(start + 100ms);
  window.epoch_finished(start + 200ms, 0.2);
  EXPECT_TRUE(telemetry.summary(window.bounds()).at("gpus").at(0).at("process_memory_bytes").is_null())
      << telemetry.summary(window.bounds()).at("gpus").at(0).at("process_memory_bytes");
  fake.add_process(0, job_pid + 1, 1ull << 30);  // a figure for a process of the job beside it: still unknown
  telemetry.sample(start + 300ms);
  window.epoch_finished(start + 400ms, 0.2);
  EXPECT_TRUE(telemetry.summary(window.bounds()).at("gpus").at(0).at("process_memory_bytes").is_null());
}

TEST(GpuTelemetry, AThermalSlowdownInTheTimedEpochsIsThrottling) {
  FakeNvml fake;
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), two_gpus, is_job);
  const auto start = Clock::now();
  TimedWindow window;
  telemetry.sample(start + 100ms);
  fake.set(1, 1200, 700000, 88, 0x40 | 0x4);
  telemetry.sample(start + 200ms);
  window.epoch_finished(start + 300ms, 0.25);
  const auto section = telemetry.summary(window.bounds());
  EXPECT_FALSE(section.at("gpus").at(0).at("throttled").get<bool>());
  EXPECT_TRUE(section.at("gpus").at(1).at("throttled").get<bool>());
  EXPECT_EQ(section.at("gpus").at(1).at("clock_event_reasons"),
            nlohmann::json::array({"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(section.at("gpus").at(1).at("sm_clock_mhz").at("min"), 1200.0);
  EXPECT_TRUE(section.at("throttled").get<bool>());
}

TEST(GpuTelemetry, WithoutProgressLinesTheWholeRunIsSummarisedAndSaysSo) {
  FakeNvml fake;
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), one_gpu, is_job);
  telemetry.sample(Clock::now());
  telemetry.sample(Clock::now());
  const auto section = telemetry.summary(std::nullopt);
  EXPECT_EQ(section.at("window"), "whole_run");
  EXPECT_EQ(section.at("samples"), 2);
  EXPECT_FALSE(section.contains("window_seconds"));
  EXPECT_EQ(section.at("gpus").at(0).at("process_memory_bytes").at("max"), 0.0) << "no process of the job";
}

TEST(GpuTelemetry, NvmlThatCannotBeHadIsReportedWithItsReason) {
  try {
    Nvml nvml("/nonexistent/libnvidia-ml.so.1");
    FAIL() << "loaded a library that does not exist";
  } catch (const NvmlUnavailable& error) {
    EXPECT_NE(std::string(error.what()).find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
        << error.what();
  }
  FakeNvml fake;
  fake.fail_init(9);
  try {
    Nvml nvml(TS_FAKE_NVML);
    FAIL() << "initialised an NVML whose init failed";
  } catch (const NvmlUnavailable& error) {
    EXPECT_STREQ(error.what(), "NVML init: Driver Not Loaded");
  }
  fake.reset();
  auto nvml = std::make_shared<const Nvml>(TS_FAKE_NVML);
  EXPECT_THROW(GpuTelemetry(nvml, nlohmann::json::array({{{"index", 3}, {"uuid", "GPU-gone"}}}), is_job),
               NvmlUnavailable);
  EXPECT_THROW(GpuTelemetry(nvml, nlohmann::json::array({{{"index", 0}}}), is_job), NvmlUnavailable);

  auto none = GpuTelemetry::unavailable("the job ran on no GPU");
  none.sample(Clock::now());
  EXPECT_FALSE(none.available());
  EXPECT_EQ(none.summary(std::nullopt),
            (nlohmann::json{{"status", "unavailable"}, {"reason", "the job ran on no GPU"}}));
}

// NVML's energy counters over the timed epochs (docs/methodology.md): the
// counter's joules, checked against the integral of the sampled power.
TEST(GpuTelemetry, TheEnergyOfTheTimedEpochsComesFromTheCounterAndAgreesWithThePower) {
  FakeNvml fake;
  GpuTelemetry telemetry(std::make_shared<const Nvml>(TS_FAKE_NVML), two_gpus, is_job);
  const auto start = Clock::now();
  TimedWindow window;
  // 600 W on GPU 0 and 300 W on GPU 1 while timed, 100 W before and after; counters in millijoules.
  double counter[2] = {1e9, 2e9};
  for (int i = 0; i <= 12; ++i) {
    const bool timed = i >= 1 && i <= 11;
    for (int g = 0; g < 2; ++g) {
      fake.set(g, 1980, timed ? (g == 0 ? 600000 : 300000) : 100000, 60, 0);
      fake.set_energy(g, static_cast<unsigned long long>(counter[g]));
      counter[g] += (i >= 1 && i < 11 ? (g == 0 ? 600.0 : 300.0) : 100.0) * 100;  // W over the next 100 ms, in mJ
    }
    telemetry.sample(start + i * 100ms);
  }
  window.epoch_finished(start + 600ms, 0.5);  // 0.1 s .. 1.1 s
  window.epoch_finished(start + 1100ms, 0.5);
  const auto energy = telemetry.energy(window.bounds());
  EXPECT_EQ(energy.at("status"), "ok") << energy.dump();
  EXPECT_EQ(energy.at("source"), "nvml");
  EXPECT_EQ(energy.at("window"), "timed_epochs");
  EXPECT_NEAR(energy.at("seconds").get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(energy.at("joules").get<double>(), 900.0, 1e-6);
  EXPECT_NEAR(energy.at("average_power_w").get<double>(), 900.0, 1e-6);
  EXPECT_NEAR(energy.at("domains").at(0).at("joules").get<double>(), 600.0, 1e-6);
  EXPECT_EQ(energy.at("domains").at(1).at("name"), "GPU 1");
  EXPECT_NEAR(energy.at("power_integral_joules").get<double>(), 900.0, 1e-6);
  EXPECT_EQ(energy.at("counter_wraps"), 0);

  auto none = GpuTelemetry::unavailable("the job ran on no GPU");
  EXPECT_EQ(none.energy(std::nullopt), (nlohmann::json{{"status", "absent"}, {"reason", "the job ran on no GPU"}}));
}

TEST(ProcessTree, ADescendantIsToldFromAStranger) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_TRUE(ProcessTree::descends_from(child, ::getpid()));
  EXPECT_FALSE(ProcessTree::descends_from(::getpid(), child));
  EXPECT_FALSE(ProcessTree::descends_from(::getppid(), ::getpid()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace ts::agent
