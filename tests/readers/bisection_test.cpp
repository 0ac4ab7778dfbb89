// The bisection's search and its step verdicts (readers/bisection.hpp): the
// search finds the first bad step among steps whose verdicts are planted,
// measures the bad side first, and stops at a step it cannot judge; a step
// is bad only by the regression rule, good only when its interval lies
// below the threshold.
#include "readers/bisection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ts::readers {
namespace {

using Kind = BisectionState::Kind;

std::vector<std::string> numbered_steps(int count) {
  std::vector<std::string> steps;
  for (int i = 0; i < count; ++i) steps.push_back("v" + std::to_string(i));
  return steps;
}

// Runs the search to its end with the verdict `verdict_of(index)`; the steps measured, in order.
std::pair<BisectionState, std::vector<std::string>> search(const std::vector<std::string>& steps,
                                                           const std::function<StepVerdict(std::size_t)>& verdict_of) {
  std::map<std::string, StepVerdict> verdicts;
  std::vector<std::string> measured;
  auto state = next_step(steps, verdicts);
  while (state.kind == Kind::measure) {
    measured.push_back(state.step);
    const auto index = static_cast<std::size_t>(std::find(steps.begin(), steps.end(), state.step) - steps.begin());
    verdicts[state.step] = verdict_of(index);
    state = next_step(steps, verdicts);
  }
  return {state, measured};
}

TEST(Bisection, FindsEveryPlantedFirstBadStepInLogarithmicallyManyMeasurements) {
  for (int count : {2, 3, 4, 7, 16, 33}) {
    const auto steps = numbered_steps(count);
    for (int first_bad = 1; first_bad < count; ++first_bad) {
      const auto [state, measured] = search(steps, [&](std::size_t i) {
        return static_cast<int>(i) >= first_bad ? StepVerdict::bad : StepVerdict::good;
      });
      ASSERT_EQ(state.kind, Kind::first_bad) << count << " steps, first bad " << first_bad;
      EXPECT_EQ(state.step, steps[first_bad]);
      EXPECT_EQ(state.last_good, steps[first_bad - 1]);
      EXPECT_EQ(measured.front(), steps.back()) << "the bad side is measured first";
      // The bad side, then a halving of the count - 2 steps between.
      EXPECT_LE(measured.size(), 1 + static_cast<std::size_t>(std::ceil(std::log2(count - 1))));
    }
  }
}

TEST(Bisection, ABadSideThatIsNotSlowerEndsItAndAnUndecidedStepStopsItWithoutAGuess) {
  const auto steps = numbered_steps(9);
  const auto not_regressed = search(steps, [](std::size_t) { return StepVerdict::good; });
  EXPECT_EQ(not_regressed.first.kind, Kind::not_regressed);
  EXPECT_EQ(not_regressed.second, std::vector<std::string>{"v8"});

  // v4, the first middle, cannot be judged: the search stops there, with what it knows.
  const auto stuck = search(steps, [](std::size_t i) {
    return i == 4 ? StepVerdict::inconclusive : i > 4 ? StepVerdict::bad : StepVerdict::good;
  });
  EXPECT_EQ(stuck.first.kind, Kind::inconclusive);
  EXPECT_EQ(stuck.first.step, "v4");
  EXPECT_EQ(stuck.first.last_good, "v0");
  EXPECT_EQ(stuck.first.known_bad, "v8");
  EXPECT_EQ(stuck.second, (std::vector<std::string>{"v8", "v4"}));
  EXPECT_THROW(next_step({"only"}, {}), std::invalid_argument);
}

std::vector<double> runs(double center, double spread, int count, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> unit;
  std::vector<double> drawn;
  for (int i = 0; i < count; ++i) drawn.push_back(center * std::exp(spread * unit(random)));
  return drawn;
}

TEST(Bisection, AStepIsBadByTheRuleGoodBelowTheThresholdAndInconclusiveWhenItsIntervalStraddlesIt) {
  const RegressionRule rule;  // alpha 0.01, threshold 0.05
  const auto good = runs(1.0, 0.01, 8, 1);
  const auto slower = judge_step("slow", runs(1.3, 0.01, 8, 2), good, rule, 0.05);
  EXPECT_EQ(slower.verdict, StepVerdict::bad);
  EXPECT_LT(slower.p_value, 0.01);
  ASSERT_TRUE(slower.ratio);
  EXPECT_NEAR(slower.ratio->estimate, 1.3, 0.03);

  const auto same = judge_step("same", runs(1.0, 0.01, 8, 3), good, rule, 0.05);
  EXPECT_EQ(same.verdict, StepVerdict::good);
  EXPECT_LT(same.ratio->high, 1.05);

  // Half the runs fast, half slow: the interval spans the threshold and the test cannot separate them.
  std::vector<double> split{0.7, 1.6, 0.7, 1.6, 0.7, 1.6, 0.7, 1.6};
  const auto noisy = judge_step("noisy", split, good, rule, 0.05);
  EXPECT_EQ(noisy.verdict, StepVerdict::inconclusive);
  EXPECT_LT(noisy.ratio->low, 1.05);
  EXPECT_GT(noisy.ratio->high, 1.05);

  // A 3% slowdown at a calibrated threshold of 10%: not bad; good only once the interval is below 1.10.
  EXPECT_EQ(judge_step("small", runs(1.03, 0.005, 8, 4), good, rule, 0.10).verdict, StepVerdict::good);
  // Too few runs for an interval, and the rule cannot flag: nothing to say.
  EXPECT_EQ(judge_step("few", {1.0, 1.01}, {1.0, 0.99}, rule, 0.05).verdict, StepVerdict::inconclusive);
  EXPECT_EQ(judge_step("failed", {}, good, rule, 0.05).verdict, StepVerdict::inconclusive);
}

TEST(Bisection, TheEvidenceTableHasARowForEachMeasuredStepInTheStepsOrder) {
  const RegressionRule rule;
  const auto good = runs(1.0, 0.01, 6, 5);
  std::vector<StepEvidence> measured{judge_step("v3", runs(1.3, 0.01, 6, 6), good, rule, 0.05),
                                     judge_step("v1", runs(1.0, 0.01, 6, 7), good, rule, 0.05)};
  const auto table = evidence_table({"v0", "v1", "v2", "v3"}, measured, "env");
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.columns.front(), "env");
  EXPECT_EQ(table.rows[0][0], "v1");
  EXPECT_EQ(table.rows[0][column_of(table, "verdict")], "good");
  EXPECT_EQ(table.rows[1][0], "v3");
  EXPECT_EQ(table.rows[1][column_of(table, "verdict")], "bad");
  EXPECT_EQ(table.rows[1][column_of(table, "runs")], 6);
}

}  // namespace
}  // namespace ts::readers
