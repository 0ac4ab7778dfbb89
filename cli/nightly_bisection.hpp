#pragma once
// torchsweep nightly --bisect (docs/bisect.md): each regression the night
// confirmed (with --no-confirm: flagged) whose two nights ran different
// PyTorch versions (an environment upgraded in place) is bisected through
// the coordinator, over the environments its agents offer between the two
// versions; one whose baseline version no agent offers any more is named,
// with the commands that would make and bisect it.
#include <chrono>
#include <string>

#include "cli/client.hpp"
#include "readers/query.hpp"
#include "shared/regression_rule.hpp"

namespace ts::cli {

struct NightlyBisection {
  ClientSettings client;
  std::string db;   // the coordinator's store, read here
  std::string tag;  // the nightly history's: the baseline is its previous sweep
  RegressionRule rule;
  std::chrono::seconds timeout;  // of each step
  bool explain = false;          // each first bad found: explained against its last good (bisect --explain)
};

// Prints, for each regression row of `table` (the night's classified
// regressions of `current`), its bisection's evidence and conclusion, or why
// it is not bisected.
void bisect_regressions(const NightlyBisection& settings, const readers::Table& table,
                        const readers::ResultFilter& current);

}  // namespace ts::cli
