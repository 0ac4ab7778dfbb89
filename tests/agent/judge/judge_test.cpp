// The whole judgement of a raw result, as the agent applies it to every runner's.
#include "agent/judge/judge.hpp"

#include <gtest/gtest.h>

namespace ts::agent {
namespace {

nlohmann::json raw(nlohmann::json job) {
  job.update({{"model", "mlp"}, {"batch_size", 4}}, true);
  return {{"status", "ok"},
          {"job", job},
          {"timing",
           {{"iterations_per_epoch", 2}, {"epoch_seconds", {0.2, 0.2}}, {"step_seconds", {{0.1, 0.1}, {0.1, 0.1}}}}},
          {"warnings", nlohmann::json::array()}};
}

TEST(Judge, ARawResultLeavesWithTimingAndEfficiencyJudged) {
  auto document = raw({});
  judge(document, {});
  EXPECT_DOUBLE_EQ(document.at("timing").at("median_step_seconds").get<double>(), 0.1);
  EXPECT_EQ(document.at("timing").at("noisy"), false);
  // The efficiency section reads the median step the timing judgement set.
  ASSERT_TRUE(document.contains("efficiency"));
  EXPECT_GT(document.at("efficiency").at("achieved_flops_per_s").get<double>(), 0.0);
  EXPECT_TRUE(document.at("efficiency").at("mfu").is_null());  // no peak measured
  EXPECT_TRUE(document.at("warnings").empty());
}

TEST(Judge, WarmupZeroIsSaidOnce) {
  auto document = raw({{"warmup", 0}});
  judge(document, {});
  ASSERT_EQ(document.at("warnings").size(), 1u);
  EXPECT_TRUE(document.at("warnings").at(0).get<std::string>().starts_with("warmup is 0:"));
}

TEST(Judge, UnsuccessfulResultsAreOnlySummarized) {
  nlohmann::json unsupported{{"status", "unsupported"}, {"job", {{"model", "mlp"}, {"warmup", 0}}}, {"error", "fp16"}};
  auto before = unsupported;
  judge(unsupported, {});
  ASSERT_TRUE(unsupported.contains("summary"));
  EXPECT_EQ(unsupported.at("summary").at("error"), "fp16");
  unsupported.erase("summary");
  EXPECT_EQ(unsupported, before);
}

}  // namespace
}  // namespace ts::agent
