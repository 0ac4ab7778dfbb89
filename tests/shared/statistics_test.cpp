#include "shared/statistics.hpp"

#include <gtest/gtest.h>

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
  EXPECT_NEAR(quantile(x, 0.9), 9.1, 1e-12);   // position 8.1
  EXPECT_NEAR(quantile(x, 0.25), 3.25, 1e-12); // position 2.25
  EXPECT_NEAR(iqr(x), 4.5, 1e-12);             // 7.75 - 3.25
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
