// The agent's input-bound judgement, the same for every runner's result.
#include "agent/judge/input_stalls.hpp"

#include <gtest/gtest.h>

namespace ts::agent {
namespace {

nlohmann::json result(std::vector<double> stalls, std::vector<double> epochs, double input_bound_above) {
  return {{"status", "ok"},
          {"job", {{"model", "resnet18"}, {"batch_size", 8}, {"input_bound_above", input_bound_above}}},
          {"timing", {{"epoch_seconds", epochs}}},
          {"data", {{"epoch_input_stall_seconds", stalls}}},
          {"warnings", nlohmann::json::array()}};
}

TEST(InputStalls, TheMedianEpochAboveTheJobsThresholdIsInputBound) {
  auto document = result({0.3, 0.05, 0.2, 0.0}, {1.0, 1.0, 1.0, 1.0}, 0.1);
  judge_input_stalls(document);
  const auto& data = document.at("data");
  EXPECT_DOUBLE_EQ(data.at("median_input_stall_fraction").get<double>(), 0.125);
  EXPECT_TRUE(data.at("input_bound").get<bool>());
  EXPECT_EQ(data.at("input_bound_epochs"), 2);
  ASSERT_EQ(document.at("warnings").size(), 1u);
  EXPECT_EQ(document.at("warnings").at(0),
            "input-bound: the step loop waited for data 12.5% of the median epoch (above input_bound_above, 0.1)");
}

TEST(InputStalls, BelowTheThresholdNoEpochCountsAndNothingIsSaid) {
  auto document = result({0.01, 0.3}, {1.0, 2.0}, 0.2);
  judge_input_stalls(document);
  const auto& data = document.at("data");
  EXPECT_DOUBLE_EQ(data.at("median_input_stall_fraction").get<double>(), 0.08);
  EXPECT_FALSE(data.at("input_bound").get<bool>());
  EXPECT_EQ(data.at("input_bound_epochs"), 0);
  EXPECT_TRUE(document.at("warnings").empty());
}

TEST(InputStalls, AStallIsAtMostItsEpochAndAnEmptyEpochStallsNothing) {
  auto document = result({5.0, 1.0}, {1.0, 0.0}, 0.5);
  judge_input_stalls(document);
  EXPECT_DOUBLE_EQ(document.at("data").at("median_input_stall_fraction").get<double>(), 0.5);
  EXPECT_EQ(document.at("data").at("input_bound_epochs"), 1);
}

TEST(InputStalls, ResultsWithoutDataOrNotOkAreLeftAlone) {
  nlohmann::json synthetic{{"status", "ok"}, {"job", {{"model", "mlp"}}}, {"timing", {{"epoch_seconds", {1.0}}}}};
  const auto before = synthetic;
  judge_input_stalls(synthetic);
  EXPECT_EQ(synthetic, before);
  auto failed = result({0.9}, {1.0}, 0.1);
  failed["status"] = "failed";
  failed.erase("timing");
  const auto failed_before = failed;
  judge_input_stalls(failed);
  EXPECT_EQ(failed, failed_before);
}

}  // namespace
}  // namespace ts::agent
