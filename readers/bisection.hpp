#pragma once
// torchsweep bisect (docs/bisect.md): which step between a good and a bad
// side (environments in version order, or commits of the user's model code)
// made one configuration slower. Each step is measured in a sweep of its
// own, paired with the good side on one agent, and judged against that
// sweep's good runs; the search is an ordinary bisection that stops, never
// guessing, at a step it cannot judge.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "readers/table.hpp"
#include "store/sqlite.hpp"
#include "shared/regression_rule.hpp"
#include "shared/statistics.hpp"

namespace ts::readers {

enum class StepVerdict { good, bad, inconclusive };
std::string to_string(StepVerdict verdict);

// One measured step against the good side it ran beside.
struct StepEvidence {
  std::string step;  // the environment's name, or the commit
  std::string sweep_id{};
  std::vector<double> runs{}, reference_runs{};  // each run's median epoch, in seconds
  // median(step) / median(good), with its 95% interval; the bounds only from
  // stats::minimum_runs_for_interval runs a side.
  std::optional<stats::Interval> ratio{};
  double threshold = 0;  // the rule's, or what the calibrated noise needs where larger
  double p_value = 1;
  StepVerdict verdict = StepVerdict::inconclusive;
};

// The step's runs against the good side's by the regression rule at
// `threshold`: bad when the rule calls it regressed; good when the ratio's
// interval lies wholly below 1 + threshold (it is not slower by the
// threshold, at 95%); inconclusive otherwise (the interval straddles it, or
// too few runs to say).
StepEvidence judge_step(std::string step, std::vector<double> runs, std::vector<double> reference_runs,
                        const RegressionRule& rule, double threshold, std::uint64_t seed = 0);

// What a bisection does next, given the steps in order (the good side first,
// the bad side last) and the verdicts measured so far (by step).
struct BisectionState {
  enum class Kind {
    measure,        // measure `step` next
    first_bad,      // `step` is the first bad one, `last_good` the one before it
    inconclusive,   // `step` could not be judged: the search stops there
    not_regressed,  // the bad side is not slower than the good one
  };
  Kind kind = Kind::measure;
  std::string step;
  // Where the search stands: the last step known good, the first known bad
  // (empty until the bad side is measured bad).
  std::string last_good{}, known_bad{};
};
// The bad side is measured first (is there a regression at all?); then the
// middle of the interval between the last step known good and the first
// known bad. Throws std::invalid_argument for fewer than two steps.
BisectionState next_step(const std::vector<std::string>& steps, const std::map<std::string, StepVerdict>& verdicts);

// The evidence table: one row per measured step, in the steps' order:
// step, sweep, runs, median_epoch_s, good_runs, good_median_epoch_s, ratio,
// ratio_low, ratio_high, threshold, p_value, verdict.
Table evidence_table(const std::vector<std::string>& steps, const std::vector<StepEvidence>& measured,
                     const std::string& step_column);

// Each ok result's median epoch in a step's sweep, by the value of the
// bisected job field (`env`, `model_commit`) of its job: the sweep's two
// sides. Confirmation reruns are not counted.
std::map<std::string, std::vector<double>> runs_by_side(store::Database& database, const std::string& sweep_id,
                                                        const std::string& field);

// The bisection's sweeps already in the store (tagged `tag`, not
// cancelled): the step each measures (the value of the job field `field`
// other than the good side's, read from its jobs) -> the newest such
// sweep's id.
std::map<std::string, std::string> step_sweeps(store::Database& database, const std::string& tag,
                                               const std::string& field, const std::string& good);

}  // namespace ts::readers
