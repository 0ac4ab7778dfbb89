// What a result's energy is per sample and token, and a counter the sampled
// power contradicts (docs/methodology.md).
#include "agent/judge/energy.hpp"

#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "simulation/synthetic_result.hpp"

namespace ts::agent {
namespace {

using simulation::make_result;

nlohmann::json measured(double joules, double seconds, nlohmann::json integral) {
  return {{"status", "ok"},
          {"source", "nvml"},
          {"window", "timed_epochs"},
          {"seconds", seconds},
          {"joules", joules},
          {"average_power_w", joules / seconds},
          {"power_integral_joules", integral},
          {"counter_wraps", 0},
          {"domains", nlohmann::json::array()}};
}

TEST(Energy, JoulesPerSampleAreTheAveragePowerOverTheThroughputAndTheSummaryCarriesThem) {
  // 64 samples x 10 steps in a median epoch of 1 s: 640 samples/s, at 320 W.
  auto result = make_result({.batch_size = 64, .epoch_seconds = {1.0, 1.0, 1.0}, .iters = 10});
  result["energy"] = measured(960.0, 3.0, 950.0);
  judge(result, {});
  const auto& energy = result.at("energy");
  EXPECT_DOUBLE_EQ(energy.at("per_sample_joules").get<double>(), 0.5);
  EXPECT_TRUE(energy.at("per_token_joules").is_null());  // an MLP reads no tokens
  const auto& summary = result.at("summary");
  EXPECT_EQ(summary.at("energy_source"), "nvml");
  EXPECT_DOUBLE_EQ(summary.at("energy_joules").get<double>(), 960.0);
  EXPECT_DOUBLE_EQ(summary.at("average_power_w").get<double>(), 320.0);
  EXPECT_DOUBLE_EQ(summary.at("joules_per_sample").get<double>(), 0.5);
  for (const auto& warning : result.at("warnings"))
    EXPECT_EQ(warning.get<std::string>().find("energy"), std::string::npos);
}

TEST(Energy, ACounterThePowerIntegralContradictsIsWarnedOfAndAbsentEnergyHasNoFigures) {
  auto result = make_result({});
  result["energy"] = measured(1000.0, 2.0, 700.0);
  judge(result, {});
  bool warned = false;
  for (const auto& warning : result.at("warnings"))
    warned = warned || warning.get<std::string>().starts_with("energy: the nvml counter says 1000 J");
  EXPECT_TRUE(warned) << result.at("warnings").dump();

  auto absent = make_result({});
  absent["energy"] = {{"status", "absent"}, {"reason", "no RAPL zone under /sys/class/powercap"}};
  judge(absent, {});
  EXPECT_FALSE(absent.at("energy").contains("per_sample_joules"));
  EXPECT_TRUE(absent.at("summary").at("energy_joules").is_null());
  EXPECT_TRUE(absent.at("summary").at("energy_source").is_null());
}

}  // namespace
}  // namespace ts::agent
