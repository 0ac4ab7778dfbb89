#pragma once
// Two ways of running the same steps, measured against each other in one
// process: rounds interleaved, the order flipping every round, so drift
// and order hit both alike; then both medians and their ratio with a
// bootstrap interval. The worker's overhead benches share it.
#include <cstdio>
#include <functional>
#include <vector>

#include "shared/statistics.hpp"

namespace ts::bench {

struct Interleaved {
  std::vector<double> plain, harness;  // every step time of each side
};

inline Interleaved interleave(int rounds, const std::function<std::vector<double>()>& plain,
                              const std::function<std::vector<double>()>& harness) {
  Interleaved steps;
  const auto append = [](std::vector<double>& to, const std::vector<double>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  for (int round = 0; round < rounds; ++round) {
    if (round % 2 == 0) {
      append(steps.plain, plain());
      append(steps.harness, harness());
    } else {
      append(steps.harness, harness());
      append(steps.plain, plain());
    }
  }
  return steps;
}

inline void print_ratio(const Interleaved& steps) {
  std::printf("%-24s %12s %12s\n", "", "median step", "IQR");
  std::printf("%-24s %10.3f ms %10.3f ms\n", "hand-written loop", stats::median(steps.plain) * 1e3,
              stats::iqr(steps.plain) * 1e3);
  std::printf("%-24s %10.3f ms %10.3f ms\n", "torchsweep worker", stats::median(steps.harness) * 1e3,
              stats::iqr(steps.harness) * 1e3);
  const auto ratio = stats::ratio_of_medians(steps.harness, steps.plain, {.seed = 1});
  std::printf("worker / hand-written: %.4f (%+.2f%%), 95%% bootstrap CI [%.4f, %.4f]\n", ratio.estimate,
              (ratio.estimate - 1.0) * 100.0, ratio.low, ratio.high);
}

}  // namespace ts::bench
