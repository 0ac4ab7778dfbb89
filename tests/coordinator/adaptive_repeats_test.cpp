// Adaptive repeats' decision (coordinator/adaptive_repeats.hpp): until an
// interval is narrow enough, or until the regression rule has the power
// asked for at the pair's measured run spread (docs/noise.md).
#include "coordinator/adaptive_repeats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ts::coordinator {
namespace {

std::vector<double> runs(std::size_t count, double spread, double scale, std::mt19937_64& random) {
  std::normal_distribution<double> unit;
  std::vector<double> drawn;
  for (std::size_t i = 0; i < count; ++i) drawn.push_back(scale * std::exp(spread * unit(random)));
  return drawn;
}

AdaptiveRule until_power(double power) {
  AdaptiveRule rule;
  rule.min = 3;
  rule.max = 8;
  rule.power = power;
  rule.slowdown = 0.10;
  return rule;
}

TEST(AdaptiveRepeats, AnIntervalNarrowEnoughStopsThePairOnceItHasRunsForOne) {
  AdaptiveRule rule;
  rule.min = 3;
  rule.max = 8;
  rule.ci_half_width = 0.02;
  const std::vector<double> same(4, 1.0), other(4, 0.5);
  EXPECT_EQ(decide(rule, 4, same, other).kind, AdaptiveDecision::Kind::another_round) << "no interval below 5 runs";
  const std::vector<double> five(5, 1.0), five_other(5, 0.5);
  const auto decision = decide(rule, 5, five, five_other);
  EXPECT_EQ(decision.kind, AdaptiveDecision::Kind::converged);
  EXPECT_FALSE(decision.power) << "not asked";
}

TEST(AdaptiveRepeats, UntilPowerAQuietPairStopsAtTheFirstRoundsTheTestCanFireAt) {
  std::mt19937_64 random(5);
  const auto rule = until_power(0.9);
  // 4 runs a side: the exact test cannot reach p < 0.01 (2/70), so no power at all.
  auto quiet = decide(rule, 4, runs(4, 0.001, 1.0, random), runs(4, 0.001, 0.5, random));
  EXPECT_EQ(quiet.kind, AdaptiveDecision::Kind::another_round);
  EXPECT_DOUBLE_EQ(quiet.power.value_or(-1), 0.0);
  quiet = decide(rule, 5, runs(5, 0.001, 1.0, random), runs(5, 0.001, 0.5, random));
  EXPECT_EQ(quiet.kind, AdaptiveDecision::Kind::converged);
  EXPECT_GT(quiet.power.value_or(0), 0.99);
}

TEST(AdaptiveRepeats, UntilPowerANoisyPairRunsToItsMaximumAndTheSpeedupDoesNotCountAsNoise) {
  std::mt19937_64 random(7);
  const auto rule = until_power(0.9);
  const auto reference = runs(8, 0.15, 1.0, random), other = runs(8, 0.15, 1.0, random);
  const auto noisy = decide(rule, 8, reference, other);
  EXPECT_EQ(noisy.kind, AdaptiveDecision::Kind::max_reached);
  ASSERT_TRUE(noisy.power);
  EXPECT_LT(*noisy.power, 0.5) << "15% noise hides a 10% slowdown at 8 runs";
  // The other side twice as fast: its spread is the same, and so is the power.
  std::vector<double> faster;
  for (const double run : other) faster.push_back(run / 2);
  EXPECT_DOUBLE_EQ(decide(rule, 8, reference, faster).power.value_or(-1), *noisy.power);
  const std::vector<double> one{1.0};
  EXPECT_FALSE(decide(rule, 1, one, one).power) << "one run a side: no spread";
}

// until.decided (a bisection's steps, docs/bisect.md): a pair 4% apart, quiet enough for the power at 5 runs,
// whose ratio's interval straddles 1 + the 5% threshold. The power alone stops it undecided (a bisection then
// called its step inconclusive with runs to spare); `decided` keeps it going to max, and stops a decided pair.
TEST(AdaptiveRepeats, UntilDecidedThePowerAloneDoesNotStopAPairTheRuleCannotJudgeYet) {
  const std::vector<double> reference{1.00, 1.01, 0.99, 1.02, 0.98};
  const auto times = [&](double factor) {
    std::vector<double> scaled;
    for (const double run : reference) scaled.push_back(run * factor);
    return scaled;
  };
  auto rule = until_power(0.9);
  const auto undecided = decide(rule, 5, reference, times(1.04));
  ASSERT_EQ(undecided.kind, AdaptiveDecision::Kind::converged) << "the power alone";
  EXPECT_GT(undecided.power.value_or(0), 0.9);
  rule.decided = true;
  EXPECT_EQ(decide(rule, 5, reference, times(1.04)).kind, AdaptiveDecision::Kind::another_round);
  EXPECT_EQ(decide(rule, 8, reference, times(1.04)).kind, AdaptiveDecision::Kind::max_reached);
  EXPECT_EQ(decide(rule, 5, reference, times(1.3)).kind, AdaptiveDecision::Kind::converged) << "slower";
  EXPECT_EQ(decide(rule, 5, reference, times(1.0)).kind, AdaptiveDecision::Kind::converged) << "not slower";
}

}  // namespace
}  // namespace ts::coordinator
