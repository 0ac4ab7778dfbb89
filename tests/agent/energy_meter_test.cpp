// A job's energy from cumulative counters (agent/node/energy_meter.hpp) and
// the powercap tree they are read from on a CPU (agent/node/powercap.hpp),
// against a fake tree: windowed to the timed epochs, a counter's wrap
// accounted for, and a counter that cannot be had reported with its reason.
#include "agent/node/energy_meter.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "agent/node/powercap.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

using namespace std::chrono_literals;
using Clock = EnergyMeter::Clock;

TEST(EnergyMeter, TheTimedEpochsGetTheCountersEnergyBetweenReadings) {
  EnergyMeter meter("rapl", {{"package-0", 1e-6, std::nullopt}});
  const auto start = Clock::now();
  // 10 W before and after, 40 W from 0.2 s to 0.8 s; read every 100 ms, in microjoules.
  uint64_t counter = 123;
  for (int i = 0; i <= 10; ++i) {
    meter.record(start + i * 100ms, {{counter, std::nullopt}});
    counter += (i >= 2 && i < 8 ? 40 : 10) * 100'000;
  }
  TimedWindow window;
  window.epoch_finished(start + 500ms, 0.25);  // 0.25 s .. 0.5 s
  window.epoch_finished(start + 750ms, 0.25);  // .. 0.75 s, between readings
  const auto section = meter.section(window.bounds());
  EXPECT_EQ(section.at("status"), "ok") << section.dump();
  EXPECT_EQ(section.at("source"), "rapl");
  EXPECT_EQ(section.at("window"), "timed_epochs");
  EXPECT_NEAR(section.at("seconds").get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(section.at("joules").get<double>(), 20.0, 1e-6);
  EXPECT_NEAR(section.at("average_power_w").get<double>(), 40.0, 1e-6);
  EXPECT_TRUE(section.at("power_integral_joules").is_null()) << "RAPL has no power reading";
  // Without a timed epoch, the whole run, and it says so.
  const auto whole = meter.section(std::nullopt);
  EXPECT_EQ(whole.at("window"), "whole_run");
  EXPECT_NEAR(whole.at("joules").get<double>(), 0.2 * 10 + 0.6 * 40 + 0.2 * 10, 1e-6);
}

// RAPL's counter starts again from 0 after max_energy_range_uj, every few
// minutes at full load; NVML's only past 2^64 millijoules.
TEST(EnergyMeter, ACounterThatWrapsIsCountedOnAcrossTheWrap) {
  const uint64_t range = 1'000'000;  // 1 J
  EnergyMeter rapl("rapl", {{"package-0", 1e-6, range}});
  EnergyMeter nvml("nvml", {{"GPU 0", 1e-3, std::nullopt}});
  const auto start = Clock::now();
  uint64_t small = 900'000, huge = ~0ull - 150;  // mJ
  for (int i = 0; i <= 4; ++i) {
    rapl.record(start + i * 100ms, {{small, std::nullopt}});
    nvml.record(start + i * 100ms, {{huge, std::nullopt}});
    small = (small + 500'000) % range;  // 5 W over 100 ms
    huge += 100;                        // 1 W over 100 ms, past 2^64 at the second step
  }
  const auto section = rapl.section(std::nullopt);
  EXPECT_EQ(section.at("counter_wraps"), 2);
  EXPECT_NEAR(section.at("joules").get<double>(), 2.0, 1e-6);
  EXPECT_NEAR(section.at("average_power_w").get<double>(), 5.0, 1e-6);
  const auto gpu = nvml.section(std::nullopt);
  EXPECT_EQ(gpu.at("counter_wraps"), 1);
  EXPECT_NEAR(gpu.at("joules").get<double>(), 0.4, 1e-9);
}

TEST(EnergyMeter, WithoutTwoReadingsThereIsNoFigureAndTheReasonSaysWhy) {
  EXPECT_EQ(EnergyMeter::absent("no RAPL zone under /x").section(std::nullopt),
            (nlohmann::json{{"status", "absent"}, {"reason", "no RAPL zone under /x"}}));
  EnergyMeter meter("nvml", {{"GPU 0", 1e-3, std::nullopt}});
  meter.record(Clock::now(), {{std::nullopt, 300.0}});  // a GPU before Volta has power but no counter
  EXPECT_EQ(meter.section(std::nullopt).at("reason"), "the nvml energy counter of GPU 0 cannot be read");
  meter.record(Clock::now(), {{5, 300.0}});
  EXPECT_EQ(meter.section(std::nullopt).at("reason"), "one reading of the nvml counter of GPU 0 while the job ran");
}

class PowercapTree : public ::testing::Test {
 protected:
  // A zone directory as the kernel lays it out.
  void zone(const std::string& directory, const std::string& name, const std::string& energy, uint64_t range) {
    const auto path = root_.path() / directory;
    std::filesystem::create_directories(path);
    std::ofstream(path / "name") << name << "\n";
    std::ofstream(path / "energy_uj") << energy << "\n";
    std::ofstream(path / "max_energy_range_uj") << range << "\n";
  }
  ts::testing::TempDirectory root_{"ts_powercap"};
};

TEST_F(PowercapTree, ThePackagesAreCountedNotTheirSubzonesNorThePlatform) {
  zone("intel-rapl:0", "package-0", "1000", 262143328850);
  zone("intel-rapl:0:0", "core", "400", 262143328850);  // inside package-0's figure
  zone("intel-rapl:1", "package-1", "2000", 262143328850);
  zone("intel-rapl:2", "psys", "9000", 262143328850);  // the whole platform, packages included
  const Powercap powercap(root_.path());
  const auto domains = powercap.domains();
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[0].name, "package-0");
  EXPECT_EQ(domains[1].name, "package-1");
  EXPECT_EQ(domains[0].wraps_after, 262143328850u);
  EXPECT_DOUBLE_EQ(domains[0].joules_per_unit, 1e-6);
  const auto readings = powercap.read();
  EXPECT_EQ(readings[0].counter, 1000u);
  EXPECT_EQ(readings[1].counter, 2000u);
}

TEST_F(PowercapTree, ACounterThatCannotBeReadOrNoZoneIsUnavailableNamingWhy) {
  try {
    Powercap powercap(root_.path() / "missing");
    FAIL() << "a powercap tree that does not exist";
  } catch (const PowercapUnavailable& error) {
    EXPECT_NE(std::string(error.what()).find("no powercap interface at"), std::string::npos) << error.what();
  }
  try {
    Powercap powercap(root_.path());
    FAIL() << "a powercap tree without zones";
  } catch (const PowercapUnavailable& error) {
    EXPECT_NE(std::string(error.what()).find("no RAPL zone under"), std::string::npos) << error.what();
  }
  // As a non-root agent sees it since Linux 5.10: the file is there, its number is not.
  zone("intel-rapl:0", "package-0", "", 262143328850);
  try {
    Powercap powercap(root_.path());
    FAIL() << "a counter that cannot be read";
  } catch (const PowercapUnavailable& error) {
    EXPECT_NE(std::string(error.what()).find("intel-rapl:0/energy_uj cannot be read"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace ts::agent
