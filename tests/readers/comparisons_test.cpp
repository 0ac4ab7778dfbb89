#include "readers/comparisons.hpp"

#include <gtest/gtest.h>

namespace ts::readers {
namespace {

const Samples five_at_one{1.00, 1.01, 0.99, 1.02, 0.98};

Samples scaled(const Samples& samples, double factor) {
  Samples out;
  for (double value : samples) out.push_back(value * factor);
  return out;
}

TEST(JudgeChange, ARiseInTimeBeyondTheThresholdWithSeparatedRunsRegressed) {
  const auto judgement = judge_change(scaled(five_at_one, 1.2), five_at_one, false, {});
  EXPECT_EQ(judgement.verdict, "regressed");
  EXPECT_NEAR(judgement.p_value, 2.0 / 252, 1e-12);
}

TEST(JudgeChange, TheDirectionFollowsTheMetric) {
  // 20% more samples/s is better, not worse.
  EXPECT_EQ(judge_change(scaled(five_at_one, 1.2), five_at_one, true, {}).verdict, "improved");
  EXPECT_EQ(judge_change(scaled(five_at_one, 0.8), five_at_one, true, {}).verdict, "regressed");
}

TEST(JudgeChange, ASignificantChangeWithinTheThresholdIsTheSame) {
  EXPECT_EQ(judge_change(scaled(five_at_one, 1.2), five_at_one, false, {.alpha = 0.01, .threshold = 0.25}).verdict,
            "same");
  // Too few runs for p below alpha, however large the change.
  EXPECT_EQ(judge_change({2, 2.1, 2.2}, {1, 1.1, 1.2}, false, {}).verdict, "same");
  EXPECT_TRUE(too_few_runs_to_flag(3, 3, {}));
  EXPECT_FALSE(too_few_runs_to_flag(5, 5, {}));
}

TEST(SmallestAttainableP, MatchesTheExactDistribution) {
  EXPECT_NEAR(smallest_attainable_p(5, 5), 2.0 / 252, 1e-12);
  EXPECT_NEAR(smallest_attainable_p(4, 4), 2.0 / 70, 1e-12);
  EXPECT_NEAR(smallest_attainable_p(3, 3), 0.1, 1e-12);
  EXPECT_EQ(smallest_attainable_p(0, 5), 1);
  EXPECT_LT(smallest_attainable_p(30, 30), 1e-15);
}

TEST(Estimates, SpeedupIsReferenceOverOtherWithBoundsFromFiveRunsASide) {
  const auto cells = speedup(scaled(five_at_one, 2), five_at_one, 0);
  EXPECT_DOUBLE_EQ(cells[0].get<double>(), 2.0);
  ASSERT_TRUE(cells[1].is_number());
  EXPECT_LE(cells[1].get<double>(), 2.0);
  EXPECT_GE(cells[2].get<double>(), 2.0);
  const auto few = speedup({2, 2}, {1, 1}, 0);
  EXPECT_DOUBLE_EQ(few[0].get<double>(), 2.0);
  EXPECT_TRUE(few[1].is_null() && few[2].is_null());
  EXPECT_TRUE(speedup({}, five_at_one, 0)[0].is_null());
}

TEST(Estimates, MemoryReductionIsOneMinusOtherOverReference) {
  const auto cells = memory_reduction(five_at_one, scaled(five_at_one, 0.75), 0);
  EXPECT_NEAR(cells[0].get<double>(), 0.25, 1e-12);
  EXPECT_LE(cells[1].get<double>(), cells[0].get<double>());
  EXPECT_GE(cells[2].get<double>(), cells[0].get<double>());
  EXPECT_TRUE(memory_reduction({0, 0}, {1, 1}, 0)[0].is_null());  // nothing to reduce from
}

TEST(Estimates, ScalingEfficiencyDividesTheGainByTheRanks) {
  const auto cells = scaling_efficiency(scaled(five_at_one, 3), five_at_one, 4, 0);
  EXPECT_NEAR(cells[0].get<double>(), 0.75, 1e-12);
}

TEST(Medians, ChangeIsNullWithoutBothSides) {
  EXPECT_TRUE(median_change({}, {1}).is_null());
  EXPECT_TRUE(median_change({1}, {0}).is_null());
  EXPECT_NEAR(median_change({1.1}, {1}).get<double>(), 0.1, 1e-12);
  EXPECT_TRUE(median_or_null({}).is_null());
}

}  // namespace
}  // namespace ts::readers
