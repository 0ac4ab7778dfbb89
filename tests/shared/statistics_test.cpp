#include "shared/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ts::stats {
namespace {

// Expected values worked out by hand and checked with numpy 1.26
// (np.quantile's default 'linear' method is Hyndman & Fan type 7).
TEST(Statistics, MedianOfOddAndEvenSamples) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
}

TEST(Statistics, QuantileInterpolatesLinearly) {
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 10.0);
  EXPECT_NEAR(quantile(x, 0.9), 9.1, 1e-12);    // position 8.1
  EXPECT_NEAR(quantile(x, 0.25), 3.25, 1e-12);  // position 2.25
  EXPECT_NEAR(iqr(x), 4.5, 1e-12);              // 7.75 - 3.25
}

TEST(Statistics, SampleStandardDeviationAndCv) {
  const std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(x), 5.0);
  EXPECT_NEAR(stddev(x), 2.138089935299395, 1e-12);  // sqrt(32 / 7)
  EXPECT_NEAR(coefficient_of_variation(x), 2.138089935299395 / 5.0, 1e-12);
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{42}), 0.0);
}

TEST(Statistics, MedianAbsoluteDeviation) {
  // median 2; |x - 2| = 1 1 0 0 2 4 7 -> median 1
  EXPECT_DOUBLE_EQ(mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9}), 1.0);
}

TEST(Statistics, SummaryAgreesWithTheSingleFunctions) {
  const std::vector<double> x{0.5, 0.25, 1.5, 0.75, 1.0};
  const auto s = summarize(x);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, median(x));
  EXPECT_DOUBLE_EQ(s.iqr, iqr(x));
  EXPECT_DOUBLE_EQ(s.min, 0.25);
  EXPECT_DOUBLE_EQ(s.max, 1.5);
  EXPECT_NEAR(s.p99, quantile(x, 0.99), 1e-15);
}

TEST(Statistics, LeavesTheCallersOrderAlone) {
  std::vector<double> x{3, 1, 2};
  (void)median(x);
  EXPECT_EQ(x, (std::vector<double>{3, 1, 2}));
}

TEST(Statistics, RejectsEmptySamplesAndBadQuantiles) {
  EXPECT_THROW(median(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1.0}, 1.5), std::invalid_argument);
}

}  // namespace
}  // namespace ts::stats

namespace ts::stats {
namespace {

TEST(Bootstrap, MedianIntervalContainsTheMedianAndIsSeeded) {
  const std::vector<double> x{9.8, 10.1, 10.0, 9.9, 10.3, 10.2, 9.7, 10.0, 10.1, 12.0};
  const auto a = bootstrap_median(x, {.seed = 42});
  const auto b = bootstrap_median(x, {.seed = 42});
  EXPECT_DOUBLE_EQ(a.estimate, median(x));
  EXPECT_LE(a.low, a.estimate);
  EXPECT_GE(a.high, a.estimate);
  EXPECT_DOUBLE_EQ(a.low, b.low);
  EXPECT_DOUBLE_EQ(a.high, b.high);
  // A resampled median is always one of the order statistics' midpoints: the
  // interval stays within the data.
  EXPECT_GE(a.low, 9.7);
  EXPECT_LE(a.high, 12.0);
}

TEST(Bootstrap, ConstantSamplesGiveADegenerateInterval) {
  const auto interval = bootstrap_median(std::vector<double>(7, 3.0));
  EXPECT_DOUBLE_EQ(interval.low, 3.0);
  EXPECT_DOUBLE_EQ(interval.high, 3.0);
}

TEST(Bootstrap, RatioOfMediansIsASpeedupWithAnInterval) {
  const std::vector<double> eager{2.0, 2.1, 1.9, 2.0, 2.05}, compiled{1.0, 1.02, 0.98, 1.0, 1.01};
  const auto speedup = ratio_of_medians(eager, compiled, {.seed = 1});
  EXPECT_DOUBLE_EQ(speedup.estimate, 2.0);
  EXPECT_LE(speedup.low, 2.0);
  EXPECT_GE(speedup.high, 2.0);
  EXPECT_GT(speedup.low, 1.8);  // all resampled ratios lie in [1.9/1.02, 2.1/0.98]
  EXPECT_LT(speedup.high, 2.2);
  EXPECT_THROW(ratio_of_medians(eager, std::vector<double>{0.0, 0.0, 0.0}), std::invalid_argument);
}

TEST(Bootstrap, LargeSamplesUseOrderStatisticsAndAgreeWithTheBootstrap) {
  // 0, 1, ..., 1000 (median 500) against twice that (median 1000).
  std::vector<double> small, large;
  for (int i = 0; i <= 1000; ++i) {
    small.push_back(i);
    large.push_back(2.0 * i);
  }
  const auto fast = ratio_of_medians(large, small, {.seed = 3, .max_bootstrap_samples = 100});
  EXPECT_DOUBLE_EQ(fast.estimate, 2.0);
  // By hand: ranks 500 -+ 1.96 * sqrt(1001) / 2 = 469 .. 532 (0-based, floor/ceil), so the standard
  // error of the small median is (532 - 469) / (2 * 1.96) = 16.07, 3.21% of 500, the same share for
  // the large one; combined 4.55%, and the interval is 2 * exp(-+1.96 * 0.0455).
  EXPECT_NEAR(fast.low, 2.0 * std::exp(-1.959964 * std::hypot(63 / (2 * 1.959964) / 500, 126 / (2 * 1.959964) / 1000)),
              1e-3);
  EXPECT_NEAR(fast.high * fast.low, 4.0, 1e-9);  // symmetric on the log scale
  const auto resampled = ratio_of_medians(large, small, {.seed = 3, .max_bootstrap_samples = 2000});
  EXPECT_NEAR(fast.low, resampled.low, 0.05);
  EXPECT_NEAR(fast.high, resampled.high, 0.05);
}

TEST(Bootstrap, DifferenceOfMediansIsASlowdownWithAnInterval) {
  const std::vector<double> slow{2.0, 2.1, 1.9, 2.0, 2.05}, fast{1.0, 1.02, 0.98, 1.0, 1.01};
  const auto slower = difference_of_medians(slow, fast, {.seed = 1});
  EXPECT_DOUBLE_EQ(slower.estimate, 1.0);
  EXPECT_GE(slower.low, 1.9 - 1.02);  // every resampled difference lies in [1.9 - 1.02, 2.1 - 0.98]
  EXPECT_LE(slower.high, 2.1 - 0.98);
  EXPECT_LE(slower.low, 1.0);
  EXPECT_GE(slower.high, 1.0);
  const auto faster = difference_of_medians(fast, slow, {.seed = 1});
  EXPECT_DOUBLE_EQ(faster.estimate, -1.0);
  // Large samples: each median's order-statistic error, combined; about what resampling gives.
  std::vector<double> small, large;
  for (int i = 0; i <= 1000; ++i) {
    small.push_back(i);
    large.push_back(i + 100.0);
  }
  const auto approximated = difference_of_medians(large, small, {.seed = 3, .max_bootstrap_samples = 100});
  const auto resampled = difference_of_medians(large, small, {.seed = 3, .max_bootstrap_samples = 2000});
  EXPECT_DOUBLE_EQ(approximated.estimate, 100.0);
  EXPECT_NEAR(approximated.low + approximated.high, 200.0, 1e-9);  // symmetric
  EXPECT_NEAR(approximated.low, resampled.low, 10.0);
  EXPECT_NEAR(approximated.high, resampled.high, 10.0);
}

TEST(MannWhitney, SmallSamplesWithoutTiesGetTheExactPValue) {
  // 5 against 5, fully separated: only 1 of the C(10, 5) = 252 equally
  // likely rank splits is this extreme each way, so p = 2/252 = 0.0079
  // (the normal approximation said 0.0122, above the 0.01 rule).
  const auto test = mann_whitney_u(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(test.u, 0.0);
  EXPECT_TRUE(test.exact);
  EXPECT_NEAR(test.p_value, 2.0 / 252.0, 1e-12);
  // 4 against 4: 2/70, so at least 5 runs a side are needed for p < 0.01.
  EXPECT_NEAR(mann_whitney_u(std::vector<double>{1, 2, 3, 4}, std::vector<double>{5, 6, 7, 8}).p_value, 2.0 / 70.0,
              1e-12);
  // x = {1, 3}, y = {2, 4}: U1 = 1; of the 6 splits, U >= 3 for 2 of them: p = 2 * 2/6.
  EXPECT_NEAR(mann_whitney_u(std::vector<double>{1, 3}, std::vector<double>{2, 4}).p_value, 2.0 / 3.0, 1e-12);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximationByHand) {
  // 9 against 9 separated: U = 0, mean 40.5, sd = sqrt(81 * 19 / 12); z = (40.5 - 0.5) / sd.
  std::vector<double> x, y;
  for (int i = 0; i < 9; ++i) {
    x.push_back(i);
    y.push_back(100 + i);
  }
  const auto test = mann_whitney_u(x, y);
  EXPECT_FALSE(test.exact);
  const double z = 40.0 / std::sqrt(81.0 * 19.0 / 12.0);
  EXPECT_NEAR(test.p_value, std::erfc(z / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitney, TiesUseMidRanksAndCorrectTheVariance) {
  // pooled 1 2 2 3 | ranks 1 2.5 2.5 4; x = {1, 2}: R1 = 3.5, U = 3.5 - 3 = 0.5
  // tie term 2^3 - 2 = 6; var = 4/12 * (5 - 6/12) = 1.5; z = (|0.5 - 2| - 0.5) / sqrt(1.5)
  const auto test = mann_whitney_u(std::vector<double>{1, 2}, std::vector<double>{2, 3});
  EXPECT_DOUBLE_EQ(test.u, 0.5);
  const double z = 1.0 / std::sqrt(1.5);
  EXPECT_NEAR(test.p_value, std::erfc(z / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitney, IdenticalSamplesGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(mann_whitney_u(std::vector<double>{4, 4, 4}, std::vector<double>{4, 4}).p_value, 1.0);
  EXPECT_GT(mann_whitney_u(std::vector<double>{1, 3, 5}, std::vector<double>{2, 4, 6}).p_value, 0.5);
}

// Wilson's values as Newcombe (1998, Statistics in Medicine 17, table I) tabulates them.
TEST(Statistics, WilsonIntervalMatchesTheTabulatedValues) {
  const auto half = wilson_interval(5, 10);
  EXPECT_DOUBLE_EQ(half.estimate, 0.5);
  EXPECT_NEAR(half.low, 0.2366, 5e-5);
  EXPECT_NEAR(half.high, 0.7634, 5e-5);
  const auto none = wilson_interval(0, 10);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 0.2775, 5e-5);
  const auto all = wilson_interval(10, 10);
  EXPECT_NEAR(all.low, 0.7225, 5e-5);
  EXPECT_EQ(all.high, 1.0);
  EXPECT_THROW(wilson_interval(1, 0), std::invalid_argument);
  EXPECT_THROW(wilson_interval(3, 2), std::invalid_argument);
}

}  // namespace
}  // namespace ts::stats
