// The nested variance-components estimator against data with known,
// injected components: its estimates average to them (the ANOVA estimator
// is unbiased before truncation), in balanced and unbalanced designs.
#include "shared/variance_components.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace ts::stats {
namespace {

struct Injected {
  double node = 0, process = 0, within = 0;  // standard deviations
};

// processes_on(node) processes on each node, values_in(process) values each.
template <class ProcessesOn, class ValuesIn>
std::vector<ProcessSample> simulate(std::mt19937_64& random, const Injected& injected, int nodes,
                                    ProcessesOn processes_on, ValuesIn values_in) {
  std::normal_distribution<double> unit;
  std::vector<ProcessSample> samples;
  for (int node = 0; node < nodes; ++node) {
    const double node_effect = injected.node * unit(random);
    for (int process = 0; process < processes_on(node); ++process) {
      const double process_effect = injected.process * unit(random);
      ProcessSample sample{node, {}};
      for (int value = 0; value < values_in(node, process); ++value) {
        sample.values.push_back(1.0 + node_effect + process_effect + injected.within * unit(random));
      }
      samples.push_back(std::move(sample));
    }
  }
  return samples;
}

struct Averages {
  double node = 0, process = 0, within = 0;
};

template <class ProcessesOn, class ValuesIn>
Averages average_estimates(const Injected& injected, int nodes, ProcessesOn processes_on, ValuesIn values_in) {
  std::mt19937_64 random(20261204);
  constexpr int replicates = 200;
  Averages averages;
  for (int replicate = 0; replicate < replicates; ++replicate) {
    const auto components = estimate_variance_components(simulate(random, injected, nodes, processes_on, values_in));
    averages.node += components.node.value() / replicates;
    averages.process += components.process.value() / replicates;
    averages.within += components.within.value() / replicates;
  }
  return averages;
}

void expect_near_relative(double estimate, double truth, double tolerance, const char* level) {
  EXPECT_NEAR(estimate / truth, 1.0, tolerance) << level << ": estimated " << estimate << ", injected " << truth;
}

TEST(VarianceComponents, ABalancedDesignRecoversTheInjectedComponents) {
  const Injected injected{0.03, 0.02, 0.01};
  const auto averages = average_estimates(
      injected, 12, [](int) { return 5; }, [](int, int) { return 8; });
  expect_near_relative(averages.node, injected.node * injected.node, 0.12, "node");
  expect_near_relative(averages.process, injected.process * injected.process, 0.06, "process");
  expect_near_relative(averages.within, injected.within * injected.within, 0.02, "within");
}

// Unequal processes per node and values per process: the n0 coefficients
// of the unbalanced design, not the balanced ones, make this unbiased.
TEST(VarianceComponents, AnUnbalancedDesignRecoversTheInjectedComponents) {
  const Injected injected{0.02, 0.03, 0.015};
  const auto averages = average_estimates(
      injected, 12, [](int node) { return 2 + node % 5; },
      [](int node, int process) { return 3 + (node + 3 * process) % 9; });
  expect_near_relative(averages.node, injected.node * injected.node, 0.15, "node");
  expect_near_relative(averages.process, injected.process * injected.process, 0.06, "process");
  expect_near_relative(averages.within, injected.within * injected.within, 0.02, "within");
}

TEST(VarianceComponents, NoNoiseBetweenProcessesOrNodesEstimatesNearZeroAndNeverBelow) {
  std::mt19937_64 random(7);
  const auto samples = simulate(
      random, {0, 0, 0.01}, 4, [](int) { return 4; }, [](int, int) { return 10; });
  const auto components = estimate_variance_components(samples);
  EXPECT_GE(*components.node, 0.0);
  EXPECT_GE(*components.process, 0.0);
  EXPECT_LT(*components.process, 0.1 * *components.within);
  EXPECT_NEAR(std::sqrt(*components.within), 0.01, 0.002);
}

TEST(VarianceComponents, ANegativeEstimateIsZeroAndFlagged) {
  // Process means closer together than their within-process spread allows.
  const std::vector<ProcessSample> samples{{0, {1.0, 2.0}}, {0, {2.0, 1.0}}, {0, {1.5, 1.5}}};
  const auto components = estimate_variance_components(samples);
  EXPECT_EQ(*components.process, 0.0);
  EXPECT_TRUE(components.process_truncated);
  EXPECT_FALSE(components.node.has_value());
}

TEST(VarianceComponents, ALevelTheDesignCannotTellIsAbsent) {
  const std::vector<ProcessSample> one_node{{3, {1.0, 1.1}}, {3, {1.2, 1.3}}};
  const auto single = estimate_variance_components(one_node);
  EXPECT_FALSE(single.node.has_value());
  EXPECT_TRUE(single.process.has_value());
  EXPECT_EQ(single.nodes, 1);
  EXPECT_EQ(single.processes, 2);
  EXPECT_EQ(single.values, 4);

  const std::vector<ProcessSample> one_value_each{{0, {1.0}}, {0, {1.2}}, {1, {1.1}}, {1, {1.4}}};
  const auto bare = estimate_variance_components(one_value_each);
  EXPECT_FALSE(bare.within.has_value());
  EXPECT_TRUE(bare.process.has_value());
  EXPECT_TRUE(bare.node.has_value());

  const std::vector<ProcessSample> one_process_a_node{{0, {1.0, 1.1}}, {1, {1.2, 1.3}}};
  EXPECT_FALSE(estimate_variance_components(one_process_a_node).process.has_value());
}

TEST(VarianceComponents, ARunMeanVarianceAddsTheLevelsItCrosses) {
  VarianceComponents components;
  components.within = 0.04;
  components.process = 0.01;
  components.node = 0.02;
  EXPECT_DOUBLE_EQ(components.variance_of_a_run_mean(4, false), 0.01 + 0.01);
  EXPECT_DOUBLE_EQ(components.variance_of_a_run_mean(4, true), 0.01 + 0.01 + 0.02);
}

TEST(VarianceComponents, BadInputIsRefused) {
  EXPECT_THROW(estimate_variance_components({}), std::invalid_argument);
  const std::vector<ProcessSample> empty_process{{0, {}}};
  EXPECT_THROW(estimate_variance_components(empty_process), std::invalid_argument);
}

}  // namespace
}  // namespace ts::stats
