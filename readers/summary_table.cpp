#include <map>

#include "readers/comparisons.hpp"
#include "readers/grouping.hpp"
#include "readers/noise.hpp"
#include "readers/query_tables.hpp"

namespace ts::readers {

std::string baseline_sweep(Database& database, const std::string& baseline, const Condition& current) {
  auto exact = database.prepare("SELECT sweep_id FROM sweeps WHERE sweep_id = ?");
  exact.bind_all(baseline);
  if (exact.step()) return exact.text(0);
  const std::string sql =
      "SELECT s.sweep_id FROM sweeps s WHERE (s.name = ?1 OR s.sweep_id IN (SELECT sweep_id FROM sweep_tags WHERE "
      "tag = ?1)) AND s.sweep_id NOT IN (SELECT DISTINCT r.sweep_id FROM results r WHERE " +
      current.sql + " AND r.sweep_id IS NOT NULL) ORDER BY s.rowid DESC LIMIT 1";
  auto named = database.prepare(sql);
  named.bind(1, std::string_view(baseline));
  bind_condition(named, current, 2);
  if (named.step()) return named.text(0);
  return resolve_sweep(database, baseline, "--baseline");
}

Table summary_table(Database& database, const Condition& condition, const QueryOptions& options,
                    const std::vector<std::string>& group_names, MetricList metrics) {
  // Scaling efficiency: each group against the same configuration on one rank.
  const auto ranks_at =
      static_cast<std::size_t>(std::find(group_names.begin(), group_names.end(), "gpus") - group_names.begin());
  const bool scaling = options.baseline.empty() && ranks_at < group_names.size();
  const std::size_t throughput = scaling ? metrics.index_of(metric_named("samples_per_s")) : 0;
  const auto other_axes = [&](std::vector<nlohmann::json> key) {
    key.erase(key.begin() + static_cast<std::ptrdiff_t>(ranks_at));
    return key;
  };

  Grouping grouping;
  Collection collection;
  collection.keys = axes_named(group_names);
  collection.metrics = metrics.metrics;
  collect(database, condition, collection, grouping);
  const bool judged = !options.baseline.empty();
  if (judged) {
    ResultFilter baseline_filter;
    baseline_filter.sweeps = {baseline_sweep(database, options.baseline, condition)};
    baseline_filter.where = options.filter.where;  // the baseline's planned runs, whatever the filter's purpose
    baseline_filter.include_failed = options.filter.include_failed;
    collection.fixed_side = 1;
    collect(database, condition_of(database, baseline_filter), collection, grouping);
  }
  sort_by_key(grouping);

  Table table{group_names, {}};
  table.columns.push_back("runs");
  table.columns.push_back("flagged");     // runs flagged noisy or warmup_insufficient
  table.columns.push_back("inaccurate");  // runs whose compiled step failed the accuracy gate
  table.columns.push_back("busy");        // runs taken while the node was busy (docs/noise.md)
  // With a utilisation: runs whose rate exceeded the peak it used (docs/methodology.md).
  const bool utilisation =
      std::any_of(metrics.metrics.begin(), metrics.metrics.begin() + static_cast<std::ptrdiff_t>(metrics.shown),
                  [](const Metric* metric) { return metric->name == "mfu"; });
  if (utilisation) table.columns.push_back("peak_below_achieved");
  if (judged) table.columns.push_back("baseline_runs");
  for (std::size_t m = 0; m < metrics.shown; ++m) {
    const auto& metric = *metrics.metrics[m];
    table.columns.push_back(metric.column);
    if (judged) {
      table.columns.push_back("baseline_" + metric.column);
      table.columns.push_back(metric.name + "_change");
    }
  }
  if (judged) {
    table.columns.push_back("p_value");
    table.columns.push_back("verdict");
    table.columns.push_back("threshold");    // the rule's, or the calibrated noise's where larger
    table.columns.push_back("power_10pct");  // calibrated groups: P(a 10% slowdown is called regressed)
  }
  // A calibration measures the spread of a run's time: it speaks for the
  // metrics that move with it, not for compile time or memory.
  const auto& judged_metric = metrics.metrics[0]->name;
  std::vector<CalibratedConfiguration> calibrated;
  if (judged && !options.regression.calibration_tag.empty() &&
      (judged_metric == "epoch_time" || judged_metric == "step_time" || judged_metric == "samples_per_s" ||
       judged_metric == "tokens_per_s")) {
    calibrated = calibrated_configurations(database, options.regression.calibration_tag);
  }
  // The one-rank group of each configuration, keyed by its other axes.
  std::map<std::vector<nlohmann::json>, const Group*> one_rank;
  bool several_ranks = false;
  if (scaling) {
    for (const auto& group : grouping.groups) {
      if (group.key[ranks_at] == 1) one_rank[other_axes(group.key)] = &group;
      several_ranks = several_ranks || group.key[ranks_at] != 1;
    }
    if (several_ranks) {
      for (const char* column : {"scaling_efficiency", "scaling_efficiency_low", "scaling_efficiency_high"})
        table.columns.push_back(column);
    }
  }
  for (const auto& group : grouping.groups) {
    const auto& current = group.sides[0].samples;
    const auto& base = group.sides[1].samples;
    const auto runs =
        std::max_element(current.begin(), current.end(), [](auto& a, auto& b) { return a.size() < b.size(); })->size();
    if (runs == 0 && !judged) continue;
    auto row = group.key;
    row.push_back(static_cast<int64_t>(current[0].size()));
    row.push_back(group.sides[0].flagged);
    row.push_back(group.sides[0].inaccurate);
    row.push_back(group.sides[0].busy);
    if (utilisation) row.push_back(group.sides[0].peak_below);
    if (judged) row.push_back(static_cast<int64_t>(base[0].size()));
    for (std::size_t m = 0; m < metrics.shown; ++m) {
      row.push_back(median_or_null(current[m]));
      if (!judged) continue;
      row.push_back(median_or_null(base[m]));
      row.push_back(median_change(current[m], base[m]));
    }
    if (judged) {
      const auto& now = current[0];
      const auto& then = base[0];
      auto rule = options.regression;
      const auto run_sd = calibrated_spread(calibrated, group_names, group.key);
      rule.threshold = threshold_in_force(rule, run_sd, now.size(), then.size());
      if (now.empty() || then.empty()) {
        row.insert(row.end(), {nullptr, now.empty() ? "missing" : "new", rule.threshold, nullptr});
      } else {
        const auto judgement = judge_change(now, then, metrics.metrics[0]->higher_is_better, rule);
        const auto power =
            run_sd ? nlohmann::json(detection_power(*run_sd, now.size(), then.size(), stated_power_slowdown, rule))
                   : nlohmann::json(nullptr);
        row.insert(row.end(), {judgement.p_value, judgement.verdict, rule.threshold, power});
      }
    }
    if (scaling && several_ranks) {
      const auto single = one_rank.find(other_axes(group.key));
      const auto& ranks = group.key[ranks_at];
      const auto efficiency =
          single != one_rank.end() && ranks.is_number_integer()
              ? scaling_efficiency(current[throughput], single->second->sides[0].samples[throughput],
                                   ranks.get<double>(), options.seed)
              : EstimateCells{};
      row.insert(row.end(), efficiency.begin(), efficiency.end());
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace ts::readers
