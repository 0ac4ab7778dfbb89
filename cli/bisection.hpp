#pragma once
// One bisection (docs/bisect.md), as `torchsweep bisect` and `torchsweep
// nightly --bisect` start it: which environment or commit between a good
// and a bad side made one configuration slower, each step a sweep of its
// own through the coordinator or a local agent.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/bisect_environments.hpp"
#include "cli/client.hpp"
#include "cli/local_sweep.hpp"
#include "shared/regression_rule.hpp"

namespace ts::cli {

struct BisectSettings {
  nlohmann::json configuration = nlohmann::json::object();  // the job fields of the one configuration
  std::string good, bad;                                    // env=NAME, or commits with repo
  std::string repo, db = "torchsweep.db", format = "table";
  RegressionRule rule;
  double power = 0.9, slowdown = stated_power_slowdown;
  int64_t min_runs = 5, max_runs = 20, timeout_s = 12 * 3600;
  LocalSweepSettings local;
  ClientSettings client;
  EnvironmentMaking making;
  bool remote = false;  // through client's coordinator, not a local agent
  bool explain = false;  // the first bad found: profile it and the last good, paired, and explain (cli/bisect_why.hpp)
  std::optional<int64_t> profile_steps;
};

// Runs the bisection to its end and prints its evidence table and
// conclusion (format: table, csv or json) on stdout, with --explain the
// explanation of the first bad against the last good. Its exit status: 0 the
// first bad step found; 7 a step could not be judged (inconclusive); 2 bad
// input, or the bad side is not slower; 3 a step's sweep could not run.
int run_bisection(BisectSettings& settings);

}  // namespace ts::cli
