#include "readers/change_points.hpp"

#include <gtest/gtest.h>

#include <random>

namespace ts::readers {
namespace {

// 30 nights around 1.0 s with 2% noise, seeded.
std::vector<double> noisy_nights(std::uint32_t seed, std::size_t n = 30) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  std::vector<double> series;
  for (std::size_t i = 0; i < n; ++i) series.push_back(1.0 + noise(generator));
  return series;
}

TEST(ChangePoints, AFlatNoisySeriesHasNone) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    EXPECT_TRUE(detect_steps(noisy_nights(seed)).empty()) << "seed " << seed;
  }
}

TEST(ChangePoints, AStepThatPersistsIsFoundWhereItStarts) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    auto series = noisy_nights(seed);
    for (std::size_t i = 25; i < series.size(); ++i) series[i] *= 1.25;  // five slow nights at the end
    const auto steps = detect_steps(series);
    ASSERT_EQ(steps.size(), 1u) << "seed " << seed;
    EXPECT_EQ(steps[0].index, 25u);
    EXPECT_NEAR(steps[0].change(), 0.25, 0.04);
  }
}

TEST(ChangePoints, ALoneBlipIsNoStep) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    auto series = noisy_nights(seed);
    series[12] *= 1.3;  // one noisy night
    EXPECT_TRUE(detect_steps(series).empty()) << "seed " << seed;
  }
}

TEST(ChangePoints, AStepAndItsRevertAreTwo) {
  auto series = noisy_nights(7);
  for (std::size_t i = 10; i < 20; ++i) series[i] *= 0.8;  // ten faster nights, then back
  const auto steps = detect_steps(series);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].index, 10u);
  EXPECT_LT(steps[0].change(), 0);
  EXPECT_EQ(steps[1].index, 20u);
  EXPECT_GT(steps[1].change(), 0);
}

TEST(ChangePoints, StepsBelowTheMinimumChangeAreMerged) {
  auto series = noisy_nights(3);
  for (std::size_t i = 15; i < series.size(); ++i) series[i] *= 1.08;
  EXPECT_EQ(detect_steps(series).size(), 1u);
  StepDetectionOptions options;
  options.minimum_change = 0.10;
  EXPECT_TRUE(detect_steps(series, options).empty());
}

TEST(ChangePoints, ShortOrConstantSeriesGiveNoneAndNoError) {
  EXPECT_TRUE(detect_steps(std::vector<double>{}).empty());
  EXPECT_TRUE(detect_steps(std::vector<double>{1.0, 2.0, 3.0}).empty());
  EXPECT_TRUE(detect_steps(std::vector<double>(20, 1.0)).empty());
  std::vector<double> exact(20, 1.0);
  for (std::size_t i = 10; i < 20; ++i) exact[i] = 2.0;  // noise-free: the floor keeps gamma above 0
  ASSERT_EQ(detect_steps(exact).size(), 1u);
  EXPECT_EQ(detect_steps(exact)[0].index, 10u);
}

}  // namespace
}  // namespace ts::readers
