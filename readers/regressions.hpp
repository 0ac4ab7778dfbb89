#pragma once
// Regressions against a baseline, each classified by what its confirmation
// reruns said (docs/report.md). The rule of `query --baseline` flags a
// group; `torchsweep confirm` reruns each flagged group once and tests the
// reruns alone against the same baseline:
//   confirmed    flagged, and the reruns are flagged too
//   unconfirmed  flagged, but the reruns are not: noise, or a transient
//   flagged      flagged, not rerun yet
//   suspicious   worse than the threshold, but with so few runs that the
//                test could not have fired (its smallest attainable p-value
//                is not below alpha): more runs are needed to say
#include <string>
#include <vector>

#include "readers/query.hpp"

namespace ts::readers {

struct RegressionOptions {
  ResultFilter filter;   // the sweep(s) judged; its purpose is ignored
  std::string baseline;  // sweep id, name or tag (as query --baseline)
  RegressionRule rule;
  // The metric judged (readers/vocabulary.hpp): the epoch time, or another
  // such as compile_time (docs/compiler.md).
  std::string metric = "epoch_time";
};

// One row per group of the judged results or the baseline: the group's
// axes, runs, baseline_runs, the metric's column and baseline_ column (e.g.
// epoch_time_s, baseline_epoch_time_s), change,
// p_value, verdict, threshold, power_10pct (as query --baseline), rerun_runs, rerun_change,
// rerun_p_value, rerun_verdict and classification (above; empty for groups
// that are not worse).
Table regressions(Database& database, const RegressionOptions& options);

}  // namespace ts::readers
