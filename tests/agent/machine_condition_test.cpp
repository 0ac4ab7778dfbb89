// The machine section of a result's context (agent/node/machine_condition.hpp,
// docs/noise.md) read from a fake /proc and /sys: other processes' CPU time
// told from the job's own, steal and memory pressure, the limits, a window
// too short to judge, the settings where the kernel exposes them and null
// where it does not, and other processes on a job's GPU.
#include "agent/node/machine_condition.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

using namespace std::chrono_literals;

class MachineCondition : public ::testing::Test {
 protected:
  // The counters, in clock ticks where /proc counts ticks.
  struct Counters {
    long busy_ticks = 0, steal_ticks = 0, own_ticks = 0, children_ticks = 0;
    long memory_stall_us = 0;
  };
  void write(const std::string& relative, const std::string& text) {
    const auto file = root_.path() / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  void set(const Counters& c) {
    // user nice system idle iowait irq softirq steal guest guest_nice; busy split over user and system.
    write("proc/stat", "cpu  " + std::to_string(c.busy_ticks - c.busy_ticks / 4) + " 0 " +
                           std::to_string(c.busy_ticks / 4) + " 99999 10 0 0 " + std::to_string(c.steal_ticks) +
                           " 0 0\ncpu0 1 2 3\ncpu1 1 2 3\nintr 5\n");
    // pid (comm) state ppid ... utime stime cutime cstime: a name with a space and a parenthesis.
    write("proc/self/stat", "4242 (torchsweep (a)) S 1 4242 4242 0 -1 4194560 100 0 0 0 " +
                                std::to_string(c.own_ticks) + " 0 " + std::to_string(c.children_ticks) + " 0 20 0 8\n");
    write("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + std::to_string(c.memory_stall_us) +
                                      "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    write("proc/loadavg", "1.50 0.80 0.40 3/200 4242\n");
  }
  double seconds(long ticks) const { return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)); }
  long ticks(double seconds) const { return std::lround(seconds * static_cast<double>(::sysconf(_SC_CLK_TCK))); }
  nlohmann::json window(const Counters& before, const Counters& after, std::chrono::milliseconds length,
                        const nlohmann::json& telemetry = {{"status", "unavailable"}, {"reason", "a CPU job"}}) {
    set(before);
    const auto start = MachineWindow::Clock::now();
    const MachineWindow machine(root_.path(), start);
    set(after);
    return machine.finish(telemetry, start + length);
  }
  testing::TempDirectory root_{"machine_condition"};
};

TEST_F(MachineCondition, OtherProcessesCpuTimeMakesTheWindowBusy) {
  // 2 s on 2 CPUs: 3 s busy, of which 0.5 s the agent's and its runner's: 2.5 s of 4 are others'.
  const auto machine = window({1000, 0, 100, 0}, {1000 + ticks(3.0), 0, 100 + ticks(0.2), ticks(0.3)}, 2000ms);
  EXPECT_EQ(machine.at("cpus"), 2);
  EXPECT_NEAR(machine.at("other_cpu_share").get<double>(), 2.5 / 4, 1e-9);
  EXPECT_TRUE(machine.at("judged").get<bool>());
  EXPECT_TRUE(machine.at("busy").get<bool>());
  EXPECT_EQ(machine.at("busy_reasons"),
            nlohmann::json::array({"other processes used 63% of the 2 CPUs' time (limit 10%)"}));
  EXPECT_DOUBLE_EQ(machine.at("load_1m").get<double>(), 1.5);
}

TEST_F(MachineCondition, TheJobsOwnCpuTimeAndItsReapedRunnersAreNotOthers) {
  // A runner that kept both CPUs busy for the whole window: reaped, its time is the agent's children's.
  const auto machine = window({1000, 0, 100, 50}, {1000 + ticks(4.0), 0, 100 + ticks(0.1), 50 + ticks(3.85)}, 2000ms);
  EXPECT_NEAR(machine.at("other_cpu_share").get<double>(), 0.05 / 4, 1e-9);
  EXPECT_FALSE(machine.at("busy").get<bool>());
  EXPECT_TRUE(machine.at("busy_reasons").empty());
}

TEST_F(MachineCondition, StealAndMemoryPressurePastTheirLimitsAreReasons) {
  const auto machine = window({1000, 200, 100, 0, 1'000'000}, {1000, 200 + ticks(0.5), 100, 0, 1'200'000}, 2000ms);
  EXPECT_NEAR(machine.at("steal_share").get<double>(), 0.5 / 4, 1e-9);
  EXPECT_NEAR(machine.at("memory_pressure_share").get<double>(), 0.1, 1e-9);
  EXPECT_EQ(machine.at("busy_reasons"),
            nlohmann::json::array({"the hypervisor stole 13% of the 2 CPUs' time (limit 5%)",
                                   "tasks waited for memory 10% of the time (limit 5%)"}));
  // The same under the limits a caller asks for.
  set({1000, 200, 100, 0, 1'000'000});
  const auto start = MachineWindow::Clock::now();
  const MachineWindow relaxed(root_.path(), start);
  set({1000, 200 + ticks(0.5), 100, 0, 1'200'000});
  EXPECT_FALSE(relaxed.finish({{"status", "unavailable"}, {"reason", "-"}}, start + 2000ms, {0.1, 0.2, 0.2})
                   .at("busy")
                   .get<bool>());
}

TEST_F(MachineCondition, AWindowTooShortForTheTickCountersIsNotJudged) {
  const auto machine = window({1000, 0, 100, 0}, {1000 + ticks(0.8), 0, 100, 0}, 500ms);
  EXPECT_GT(machine.at("other_cpu_share").get<double>(), 0.5);
  EXPECT_FALSE(machine.at("judged").get<bool>());
  EXPECT_FALSE(machine.at("busy").get<bool>());
}

TEST_F(MachineCondition, SettingsAreReadWhereTheKernelExposesThemAndNullWhereNot) {
  auto machine = window({}, {}, 1500ms);
  EXPECT_TRUE(machine.at("governor").is_null());
  EXPECT_TRUE(machine.at("boost").is_null());
  EXPECT_TRUE(machine.at("smt").is_null());
  EXPECT_TRUE(machine.at("cpu_pressure_share").is_null()) << "no proc/pressure/cpu";
  EXPECT_TRUE(machine.at("memory_available_bytes").is_null());

  write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
  write("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
  write("sys/devices/system/cpu/smt/active", "1\n");
  write("proc/meminfo", "MemTotal:       24000000 kB\nMemAvailable:   12000000 kB\n");
  machine = window({}, {}, 1500ms);
  EXPECT_EQ(machine.at("governor"), "performance,powersave");
  EXPECT_EQ(machine.at("boost"), false) << "intel_pstate's no_turbo";
  EXPECT_EQ(machine.at("smt"), true);
  EXPECT_EQ(machine.at("memory_available_bytes"), 12000000LL * 1024);
  write("sys/devices/system/cpu/cpufreq/boost", "1\n");  // the generic file wins
  EXPECT_EQ(window({}, {}, 1500ms).at("boost"), true);
}

TEST_F(MachineCondition, AnotherProcessOnAJobsGpuMakesItBusyWhateverTheWindow) {
  const nlohmann::json telemetry{{"status", "ok"},
                                 {"gpus", nlohmann::json::array({{{"index", 0}, {"other_processes", 0}},
                                                                 {{"index", 3}, {"other_processes", 2}}})}};
  const auto machine = window({}, {}, 200ms, telemetry);
  EXPECT_FALSE(machine.at("judged").get<bool>());
  EXPECT_TRUE(machine.at("busy").get<bool>());
  EXPECT_EQ(machine.at("busy_reasons"), nlohmann::json::array({"GPU 3 had 2 other processes"}));
}

}  // namespace
}  // namespace ts::agent
