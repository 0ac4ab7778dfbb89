// The agent's timing judgement: the same derived figures for every runner's
// raw epoch and step times.
#include "agent/judge/timing_summary.hpp"

#include <gtest/gtest.h>

namespace ts::agent {
namespace {

nlohmann::json result(std::vector<double> epochs, std::vector<std::vector<double>> steps, nlohmann::json job = {}) {
  job.update({{"model", "mlp"}, {"batch_size", 8}}, true);
  return {
      {"status", "ok"},
      {"job", job},
      {"timing", {{"iterations_per_epoch", steps.at(0).size()}, {"epoch_seconds", epochs}, {"step_seconds", steps}}},
      {"warnings", nlohmann::json::array()}};
}

TEST(TimingSummary, MediansThroughputAndSpreadFromTheRawTimes) {
  auto document = result({1.0, 3.0, 2.0}, {{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}});
  summarize_timing(document);
  const auto& timing = document.at("timing");
  EXPECT_DOUBLE_EQ(timing.at("median_epoch_seconds").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(timing.at("median_step_seconds").get<double>(), 0.35);
  EXPECT_DOUBLE_EQ(timing.at("samples_per_second").get<double>(), 8.0 * 2 / 2.0);
  // Type-7 quartiles of 0.1..0.6: 0.225 and 0.475.
  EXPECT_NEAR(timing.at("step_iqr_over_median").get<double>(), 0.25 / 0.35, 1e-12);
  EXPECT_GT(timing.at("step_cv").get<double>(), 0.0);
  EXPECT_FALSE(timing.contains("latency"));
}

// The shape sweep's median was the runner's, the upper middle of an even
// count; it is the judge's median like every other.
TEST(TimingSummary, EachShapesMedianStepIsTheJudgesMedian) {
  auto document = result({1.0, 1.0}, {{0.5, 0.5}, {0.5, 0.5}});
  document["shapes"] = {{{"batch_size", 16}, {"step_seconds", {0.4, 0.1, 0.2, 0.3}}},
                        {{"batch_size", 32}, {"step_seconds", {0.7}}}};
  summarize_timing(document);
  EXPECT_DOUBLE_EQ(document.at("shapes")[0].at("median_step_seconds").get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(document.at("shapes")[1].at("median_step_seconds").get<double>(), 0.7);
}

TEST(TimingSummary, EveryRanksBatchCountsInThroughput) {
  auto document = result({2.0, 2.0}, {{1.0, 1.0}, {1.0, 1.0}}, {{"gpus", 3}});
  summarize_timing(document);
  EXPECT_DOUBLE_EQ(document.at("timing").at("samples_per_second").get<double>(), 8.0 * 3 * 2 / 2.0);
}

TEST(TimingSummary, ALanguageModelsThroughputIsAlsoInTokens) {
  auto gpt = result({2.0, 2.0}, {{1.0, 1.0}, {1.0, 1.0}});
  gpt["job"] = {{"model", "gpt"}, {"batch_size", 8}, {"seq_len", 64}, {"gpus", 2}};
  summarize_timing(gpt);
  EXPECT_DOUBLE_EQ(gpt.at("timing").at("tokens_per_second").get<double>(), 8.0 * 2 * 2 / 2.0 * 64);
  auto hf = result({2.0, 2.0}, {{1.0, 1.0}, {1.0, 1.0}});
  hf["job"] = {{"model", "hf:gpt2"}, {"batch_size", 8}};  // the library's default seq_len, 128
  summarize_timing(hf);
  EXPECT_DOUBLE_EQ(hf.at("timing").at("tokens_per_second").get<double>(), 8.0 * 2 / 2.0 * 128);
  auto images = result({2.0, 2.0}, {{1.0, 1.0}, {1.0, 1.0}});
  summarize_timing(images);
  EXPECT_FALSE(images.at("timing").contains("tokens_per_second"));
}

TEST(TimingSummary, AboveTheThresholdTheMeasurementIsNoisyAndSaysSo) {
  auto quiet = result({1.0, 1.0}, {{1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}});
  summarize_timing(quiet);
  EXPECT_FALSE(quiet.at("timing").at("noisy").get<bool>());
  EXPECT_TRUE(quiet.at("warnings").empty());

  auto noisy = result({1.0, 1.0}, {{1.0, 1.5, 1.0, 1.5}, {1.0, 1.5, 1.0, 1.5}});
  summarize_timing(noisy);
  EXPECT_GT(noisy.at("timing").at("step_iqr_over_median").get<double>(), noisy_iqr_over_median);
  EXPECT_TRUE(noisy.at("timing").at("noisy").get<bool>());
  ASSERT_EQ(noisy.at("warnings").size(), 1u);
  EXPECT_EQ(noisy.at("warnings").at(0), "noisy measurement: step-time IQR/median is 0.400 (above 0.1)");
}

TEST(TimingSummary, AFirstEpochFarAboveTheOthersIsInsufficientWarmup) {
  const std::vector<std::vector<double>> steps{{0.1}, {0.1}, {0.1}};
  auto over = result({1.6, 1.0, 1.0}, steps);
  auto under = result({1.4, 1.0, 1.0}, steps);
  auto single = result({1.0}, {{0.1}});
  for (auto* document : {&over, &under, &single}) summarize_timing(*document);
  EXPECT_EQ(over.at("timing").at("warmup_insufficient"), true);  // over 1.5x the median of the rest
  EXPECT_EQ(under.at("timing").at("warmup_insufficient"), false);
  EXPECT_TRUE(single.at("timing").at("warmup_insufficient").is_null());  // nothing to judge by
}

TEST(TimingSummary, InferenceGetsLatencyPercentiles) {
  auto document = result({1.0, 1.0}, {{0.1, 0.2, 0.3, 0.4, 0.5}, {0.6, 0.7, 0.8, 0.9, 1.0}}, {{"task", "infer"}});
  summarize_timing(document);
  const auto& latency = document.at("timing").at("latency");
  EXPECT_DOUBLE_EQ(latency.at("p50").get<double>(), 0.55);
  EXPECT_NEAR(latency.at("p90").get<double>(), 0.91, 1e-12);
  EXPECT_NEAR(latency.at("p99").get<double>(), 0.991, 1e-12);
}

TEST(TimingSummary, FailedResultsAreLeftAlone) {
  nlohmann::json failed{{"status", "failed"}, {"job", {{"model", "mlp"}}}, {"error", "boom"}};
  const auto before = failed;
  summarize_timing(failed);
  EXPECT_EQ(failed, before);
}

}  // namespace
}  // namespace ts::agent
