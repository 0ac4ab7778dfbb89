#include "readers/bisection.hpp"

#include <algorithm>
#include <stdexcept>

#include "store/configuration.hpp"

namespace ts::readers {

std::string to_string(StepVerdict verdict) {
  switch (verdict) {
    case StepVerdict::good: return "good";
    case StepVerdict::bad: return "bad";
    case StepVerdict::inconclusive: return "inconclusive";
  }
  throw std::logic_error("unknown step verdict");
}

StepEvidence judge_step(std::string step, std::vector<double> runs, std::vector<double> reference_runs,
                        const RegressionRule& rule, double threshold, std::uint64_t seed) {
  StepEvidence evidence;
  evidence.step = std::move(step);
  evidence.runs = std::move(runs);
  evidence.reference_runs = std::move(reference_runs);
  evidence.threshold = threshold;
  if (evidence.runs.empty() || evidence.reference_runs.empty()) return evidence;
  auto at_threshold = rule;
  at_threshold.threshold = threshold;
  const auto judged = judge_slowdown(evidence.runs, evidence.reference_runs, at_threshold, seed);
  evidence.p_value = judged.p_value;
  evidence.ratio = judged.ratio;
  evidence.verdict = judged.verdict == Slowdown::slower       ? StepVerdict::bad
                     : judged.verdict == Slowdown::not_slower ? StepVerdict::good
                                                              : StepVerdict::inconclusive;
  return evidence;
}

BisectionState next_step(const std::vector<std::string>& steps, const std::map<std::string, StepVerdict>& verdicts) {
  if (steps.size() < 2) throw std::invalid_argument("a bisection needs a good and a bad side");
  const auto verdict_of = [&](std::size_t index) -> std::optional<StepVerdict> {
    const auto found = verdicts.find(steps[index]);
    return found == verdicts.end() ? std::nullopt : std::optional(found->second);
  };
  using Kind = BisectionState::Kind;
  std::size_t good = 0, bad = steps.size() - 1;
  const auto ends = verdict_of(bad);
  if (!ends) return {Kind::measure, steps[bad], steps[good]};
  if (*ends == StepVerdict::inconclusive) return {Kind::inconclusive, steps[bad], steps[good]};
  if (*ends == StepVerdict::good) return {Kind::not_regressed, steps[bad], steps[good]};
  while (bad - good > 1) {
    const auto middle = good + (bad - good) / 2;
    const auto verdict = verdict_of(middle);
    if (!verdict) return {Kind::measure, steps[middle], steps[good], steps[bad]};
    if (*verdict == StepVerdict::inconclusive) return {Kind::inconclusive, steps[middle], steps[good], steps[bad]};
    (*verdict == StepVerdict::good ? good : bad) = middle;
  }
  return {Kind::first_bad, steps[bad], steps[good], steps[bad]};
}

Table evidence_table(const std::vector<std::string>& steps, const std::vector<StepEvidence>& measured,
                     const std::string& step_column) {
  Table table{{step_column, "sweep", "runs", "median_epoch_s", "good_runs", "good_median_epoch_s", "ratio",
               "ratio_low", "ratio_high", "threshold", "p_value", "verdict"},
              {}};
  const auto median_of = [](const std::vector<double>& runs) {
    return runs.empty() ? nlohmann::json(nullptr) : nlohmann::json(stats::median(runs));
  };
  for (const auto& step : steps) {
    const auto evidence = std::find_if(measured.begin(), measured.end(), [&](auto& e) { return e.step == step; });
    if (evidence == measured.end()) continue;
    const auto& ratio = evidence->ratio;
    const auto ratio_estimate = evidence->runs.empty() || evidence->reference_runs.empty()
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json(stats::median(evidence->runs) /
                                                     stats::median(evidence->reference_runs));
    table.rows.push_back({step, evidence->sweep_id, static_cast<int64_t>(evidence->runs.size()),
                          median_of(evidence->runs), static_cast<int64_t>(evidence->reference_runs.size()),
                          median_of(evidence->reference_runs), ratio_estimate,
                          ratio ? nlohmann::json(ratio->low) : nlohmann::json(nullptr),
                          ratio ? nlohmann::json(ratio->high) : nlohmann::json(nullptr), evidence->threshold,
                          evidence->p_value, to_string(evidence->verdict)});
  }
  return table;
}

std::map<std::string, std::vector<double>> runs_by_side(store::Database& database, const std::string& sweep_id,
                                                        const std::string& field) {
  auto select = database.prepare(std::string("SELECT json_extract(j.document, ?2), r.median_epoch_s FROM results r "
                                             "JOIN jobs j ON j.job_id = r.job_id WHERE r.sweep_id = ?1 AND "
                                             "r.status = 'ok' AND r.median_epoch_s IS NOT NULL AND NOT ") +
                                 store::confirmation_run_sql + " ORDER BY r.received_at");
  select.bind_all(sweep_id, "$." + field);
  std::map<std::string, std::vector<double>> runs;
  while (select.step()) {
    if (!select.is_null(0)) runs[select.text(0)].push_back(select.real(1));
  }
  return runs;
}

std::map<std::string, std::string> step_sweeps(store::Database& database, const std::string& tag,
                                               const std::string& field, const std::string& good) {
  // Read from the sweeps' jobs: each has the good side's jobs and the step's.
  auto select = database.prepare(
      "SELECT s.sweep_id, json_extract(j.document, ?2) AS step FROM sweeps s "
      "JOIN sweep_tags t ON t.sweep_id = s.sweep_id JOIN jobs j ON j.sweep_id = s.sweep_id "
      "WHERE t.tag = ?1 AND s.state <> 'cancelled' AND step IS NOT NULL AND step <> ?3 "
      "GROUP BY s.sweep_id ORDER BY MIN(s.created_at), MIN(s.rowid)");
  select.bind_all(tag, "$." + field, good);
  std::map<std::string, std::string> sweeps;
  while (select.step()) sweeps[select.text(1)] = select.text(0);  // the newest wins
  return sweeps;
}

}  // namespace ts::readers
