// What a result costs at a price per device-hour (docs/methodology.md).
#include "agent/judge/cost.hpp"

#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "agent/judge/summary.hpp"
#include "simulation/synthetic_result.hpp"

namespace ts::agent {
namespace {

using simulation::make_result;

TEST(Cost, TheAgentsPriceGivesCostPerMillionSamplesAndOfTheRun) {
  // 64 samples x 10 steps in a median epoch of 1 s: 640 samples/s.
  auto result = make_result({.batch_size = 64, .epoch_seconds = {1.0, 1.0, 1.0}, .iters = 10});
  judge(result, {nullptr, {}, {{"Test CPU", 3.6}}, 50.0});
  ASSERT_TRUE(result.contains("cost")) << result.dump();
  const auto& cost = result.at("cost");
  EXPECT_EQ(cost.at("device"), "Test CPU");
  EXPECT_EQ(cost.at("devices"), 1);
  EXPECT_EQ(cost.at("price_from"), "agent");
  EXPECT_NEAR(cost.at("per_million_samples").get<double>(), 3.6 / 3600 / 640 * 1e6, 1e-12);
  EXPECT_TRUE(cost.at("per_million_tokens").is_null());  // an MLP reads no tokens
  EXPECT_NEAR(cost.at("run").get<double>(), 3.6 * 50 / 3600, 1e-12);
  // The store's columns are the summary's.
  EXPECT_EQ(result.at("summary").at("run_cost"), cost.at("run"));
  EXPECT_EQ(result.at("summary").at("price_per_hour"), 3.6);
}

TEST(Cost, TheJobsPriceWinsAndAGpuJobPaysForEachGpu) {
  auto result = make_result({.gpus = 2});
  result["job"]["device"] = "cuda";
  result["context"]["gpus"] = {{{"index", 0}, {"name", "NVIDIA H200"}}, {{"index", 1}, {"name", "NVIDIA H200"}}};
  result["job"]["price_per_hour"] = {{"NVIDIA H200", 4.0}};
  const auto cost = cost_of(result, {{"NVIDIA H200", 1.0}}, 3600.0);
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->at("price_from"), "job");
  EXPECT_EQ(cost->at("devices"), 2);
  EXPECT_DOUBLE_EQ(cost->at("run").get<double>(), 8.0);  // 2 GPUs for an hour at 4
  result["timing"]["tokens_per_second"] = 1e6;
  EXPECT_DOUBLE_EQ(cost_of(result, {}, 3600.0)->at("per_million_tokens").get<double>(), 8.0 / 3600);
}

TEST(Cost, NoPriceForTheDeviceNoCostAndARunJudgedByHandHasNoRunCost) {
  auto result = make_result({});
  EXPECT_FALSE(cost_of(result, {{"NVIDIA H200", 3.5}}, 10.0));  // another device's price
  judge(result, {});
  EXPECT_FALSE(result.contains("cost"));
  EXPECT_TRUE(result.at("summary").at("cost_per_million_samples").is_null());
  const auto by_hand = cost_of(make_result({}), {{"Test CPU", 1.0}}, std::nullopt);
  ASSERT_TRUE(by_hand);
  EXPECT_TRUE(by_hand->at("run").is_null());
  EXPECT_TRUE(by_hand->at("per_million_samples").is_number());
}

}  // namespace
}  // namespace ts::agent
