#include "readers/regressions.hpp"

#include <map>

#include "readers/vocabulary.hpp"

namespace ts::readers {

namespace {

// query --baseline on the options' metric, for one purpose of the judged runs.
Table judged(Database& database, const RegressionOptions& options, const std::string& baseline_id,
             const std::string& purpose) {
  QueryOptions query_options;
  query_options.filter = options.filter;
  query_options.filter.purpose = purpose;
  query_options.metrics = {options.metric};
  query_options.baseline = baseline_id;
  query_options.regression = options.rule;
  return query(database, query_options);
}

}  // namespace

Table regressions(Database& database, const RegressionOptions& options) {
  auto measured = options.filter;
  measured.purpose = "measurement";
  const auto baseline_id = resolve_baseline(database, options.baseline, measured);
  const auto planned = judged(database, options, baseline_id, "measurement");
  const auto reruns = judged(database, options, baseline_id, "confirmation");

  const auto runs = column_of(planned, "runs");  // the group's axes come before it
  // A pointer: GCC 14 takes a reference bound through the temporary option name for a dangling one.
  const Metric* metric = &metric_named(options.metric, "--metric");
  const auto change_column = metric->name + "_change";
  const std::vector<std::string> copied{"runs",        "baseline_runs", metric->column, "baseline_" + metric->column,
                                        change_column, "p_value",       "verdict",      "threshold",
                                        "power_10pct"};
  std::map<std::vector<nlohmann::json>, const std::vector<nlohmann::json>*> rerun_of;  // by the group's axes
  for (const auto& row : reruns.rows) {
    if (row[column_of(reruns, "runs")].get<int64_t>() > 0) {
      rerun_of[{row.begin(), row.begin() + static_cast<std::ptrdiff_t>(runs)}] = &row;
    }
  }

  Table table;
  table.columns.assign(planned.columns.begin(), planned.columns.begin() + static_cast<std::ptrdiff_t>(runs));
  for (const auto& name : copied) table.columns.push_back(name == change_column ? "change" : name);
  for (const char* name : {"rerun_runs", "rerun_change", "rerun_p_value", "rerun_verdict", "classification"})
    table.columns.push_back(name);
  for (const auto& row : planned.rows) {
    const std::vector<nlohmann::json> key(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(runs));
    auto out = key;
    for (const auto& name : copied) out.push_back(row[column_of(planned, name)]);
    const auto verdict = row[column_of(planned, "verdict")].get<std::string>();
    const auto rerun = rerun_of.find(key);
    std::string rerun_verdict;
    if (rerun != rerun_of.end()) {
      const auto& other = *rerun->second;
      rerun_verdict = other[column_of(reruns, "verdict")].get<std::string>();
      out.insert(out.end(), {other[column_of(reruns, "runs")], other[column_of(reruns, change_column)],
                             other[column_of(reruns, "p_value")], rerun_verdict});
    } else {
      out.insert(out.end(), {0, nullptr, nullptr, nullptr});
    }
    std::string classification;
    const auto& change = row[column_of(planned, change_column)];
    const auto current_runs = static_cast<std::size_t>(row[runs].get<int64_t>());
    const auto& base_runs_cell = row[column_of(planned, "baseline_runs")];
    const auto base_runs = static_cast<std::size_t>(base_runs_cell.is_number() ? base_runs_cell.get<int64_t>() : 0);
    if (verdict == "regressed") {
      classification = rerun_verdict.empty() ? "flagged" : rerun_verdict == "regressed" ? "confirmed" : "unconfirmed";
    } else if (verdict == "same" && change.is_number() &&
               change.get<double>() > row[column_of(planned, "threshold")].get<double>() &&
               too_few_runs_to_flag(current_runs, base_runs, options.rule)) {
      classification = "suspicious";
    }
    out.push_back(classification.empty() ? nlohmann::json(nullptr) : nlohmann::json(classification));
    table.rows.push_back(std::move(out));
  }
  return table;
}

}  // namespace ts::readers
