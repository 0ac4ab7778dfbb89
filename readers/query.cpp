#include "readers/query.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "readers/comparisons.hpp"
#include "readers/grouping.hpp"
#include "readers/noise.hpp"
#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"

namespace ts::readers {

namespace {

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : "+") + name;
  return text;
}

// "peak_memory: rss_footprint_bytes", or both sides' fields when they differ.
nlohmann::json memory_field_text(const Metric& metric, const std::array<std::set<std::string>, 2>& fields) {
  if (fields[0].empty() && fields[1].empty()) return nullptr;
  if (fields[0] == fields[1]) return metric.name + ": " + joined(fields[0]);
  return metric.name + ": " + joined(fields[0]) + " vs " + joined(fields[1]) + " (not comparable)";
}

// A sweep id; else the newest sweep with that name or tag that is not
// among the results being judged (so "nightly" means the previous night).
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

// The values of `axis` a comparison can name: results without one (the
// worker at a path of its own has no environment) have nothing to be
// compared as.
std::vector<std::string> comparable_values(Database& database, const Condition& condition, const Axis& axis) {
  auto values = values_of(database, condition, axis);
  std::erase(values, std::string());
  return values;
}

// --compare: the axis and its two values, reference first.
struct Comparison {
  const Axis* axis = nullptr;
  std::array<std::string, 2> values;
};

Comparison comparison_of(Database& database, const Condition& condition, const std::string& spec) {
  Comparison comparison;
  const auto equals = spec.find('=');
  comparison.axis = &axis_named(spec.substr(0, equals), "--compare");
  const auto& axis = *comparison.axis;
  if (equals != std::string::npos) {
    const auto list = spec.substr(equals + 1);
    const auto comma = list.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == list.size() ||
        list.find(',', comma + 1) != std::string::npos) {
      throw InvalidInput("--compare", "expected AXIS or AXIS=REFERENCE,OTHER, got '" + spec + "'");
    }
    comparison.values = {list.substr(0, comma), list.substr(comma + 1)};
  } else if (axis.name == "mode" || axis.name == "requested_mode") {
    comparison.values = {"eager", "compiled"};
  } else if (axis.name == "data") {
    // Real data against synthetic: the speedup is then real / synthetic throughput.
    auto present = values_of(database, condition, axis);
    std::erase(present, std::string("synthetic"));
    if (present.size() != 1) {
      throw InvalidInput("--compare", "the results have " + std::to_string(present.size()) +
                                          " imagefolder datasets; name one as data=synthetic,FOLDER or compare "
                                          "each with data=synthetic,*");
    }
    comparison.values = {"synthetic", present[0]};
  } else {
    const auto present = comparable_values(database, condition, axis);
    if (present.size() != 2) {
      throw InvalidInput("--compare", "the results have " + std::to_string(present.size()) + " values of '" +
                                          axis.name + "'; name two as " + axis.name + "=A,B");
    }
    comparison.values = {present[0], present[1]};
  }
  return comparison;
}

// The metrics asked for, then those the statistics need but the table does
// not show (the epoch time of a speedup, say).
struct MetricList {
  std::vector<const Metric*> metrics;
  std::size_t shown = 0;

  explicit MetricList(const std::vector<std::string>& names) : shown(names.size()) {
    for (const auto& name : names) metrics.push_back(&metric_named(name));
  }
  std::size_t index_of(const Metric& metric) {
    const auto found = std::find(metrics.begin(), metrics.end(), &metric);
    if (found != metrics.end()) return static_cast<std::size_t>(found - metrics.begin());
    metrics.push_back(&metric);
    return metrics.size() - 1;
  }
};

std::vector<const Axis*> axes_named(const std::vector<std::string>& names) {
  std::vector<const Axis*> axes;
  for (const auto& name : names) axes.push_back(&axis_named(name, "--group-by"));
  return axes;
}

// Two values of one axis side by side: runs and medians of each, the
// speedup and the memory reduction.
Table compared_table(Database& database, const Condition& condition, const QueryOptions& options,
                     const Comparison& comparison, const std::vector<std::string>& group_names, MetricList metrics) {
  const std::size_t epoch = metrics.index_of(metric_named("epoch_time"));
  // A pointer: GCC 14 takes a reference bound through the option's temporary name for a dangling one.
  const Metric* memory_metric = &metric_named(options.memory_metric, "--memory-metric");
  if (memory_metric->field_sql == "NULL") {
    throw InvalidInput("--memory-metric",
                       "expected peak_memory, warmup_memory or reserved_memory, got '" + options.memory_metric + "'");
  }
  const std::size_t memory = metrics.index_of(*memory_metric);

  Grouping grouping;
  const Collection collection{.keys = axes_named(group_names),
                              .metrics = metrics.metrics,
                              .side_axis = comparison.axis,
                              .side_of =
                                  [&](const nlohmann::json& value) {
                                    const auto text = json_text(value);
                                    return text == comparison.values[0] ? 0 : text == comparison.values[1] ? 1 : -1;
                                  },
                              .field_metric = memory_metric,
                              .count_paired = true};
  collect(database, condition, collection, grouping);
  sort_by_key(grouping);

  Table table{group_names, {}};
  for (const auto& value : comparison.values) table.columns.push_back("runs:" + value);
  for (std::size_t m = 0; m < metrics.shown; ++m) {
    for (const auto& value : comparison.values) table.columns.push_back(metrics.metrics[m]->column + ":" + value);
  }
  for (const char* column : {"speedup", "speedup_low", "speedup_high", "memory_reduction", "memory_reduction_low",
                             "memory_reduction_high", "memory_field", "inaccurate", "busy", "paired"})
    table.columns.push_back(column);
  for (const auto& group : grouping.groups) {
    auto row = group.key;
    const auto& reference = group.samples[0];
    const auto& other = group.samples[1];
    row.push_back(static_cast<int64_t>(reference[epoch].size()));
    row.push_back(static_cast<int64_t>(other[epoch].size()));
    for (std::size_t m = 0; m < metrics.shown; ++m) {
      row.push_back(median_or_null(reference[m]));
      row.push_back(median_or_null(other[m]));
    }
    const auto speed = speedup(reference[epoch], other[epoch], options.seed);
    row.insert(row.end(), speed.begin(), speed.end());
    // Figures of different kinds (a whole-process peak against a timed
    // phase's, say) are not compared.
    const auto reduction = group.fields[0] == group.fields[1]
                               ? memory_reduction(reference[memory], other[memory], options.seed)
                               : EstimateCells{};
    row.insert(row.end(), reduction.begin(), reduction.end());
    row.push_back(memory_field_text(*memory_metric, group.fields));
    // A speedup of a model that computes something else is no speedup (docs/compiler.md).
    row.push_back(group.inaccurate[0] + group.inaccurate[1]);
    row.push_back(group.busy[0] + group.busy[1]);  // runs of either side taken on a busy node
    row.push_back(group.paired[0] + group.paired[1]);
    table.rows.push_back(std::move(row));
  }
  return table;
}

// Each group's runs and medians; against a baseline sweep, each median's
// change and the regression rule's verdict on the first metric; over a
// gpus axis with several rank counts, the scaling efficiency.
// The configuration axes less the sparse ones no result `condition` lets
// through has a value of (the sequence axes of a store without language models).
std::vector<std::string> configuration_axes_present(Database& database, const Condition& condition) {
  auto axes = configuration_axes();
  std::erase_if(axes, [&](const std::string& name) {
    const Axis axis = axis_named(name, "--group-by");
    if (!axis.sparse) return false;
    auto select = database.prepare("SELECT 1 FROM results r WHERE " + condition.sql + " AND " + axis.sql +
                                   " IS NOT NULL LIMIT 1");
    bind_condition(select, condition);
    return !select.step();
  });
  return axes;
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
    const auto& current = group.samples[0];
    const auto& base = group.samples[1];
    const auto runs =
        std::max_element(current.begin(), current.end(), [](auto& a, auto& b) { return a.size() < b.size(); })->size();
    if (runs == 0 && !judged) continue;
    auto row = group.key;
    row.push_back(static_cast<int64_t>(current[0].size()));
    row.push_back(group.flagged[0]);
    row.push_back(group.inaccurate[0]);
    row.push_back(group.busy[0]);
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
      if (run_sd && !now.empty() && !then.empty())
        rule.threshold = std::max(rule.threshold, needed_threshold(*run_sd * *run_sd, now.size(), then.size(), rule));
      if (now.empty() || then.empty()) {
        row.insert(row.end(), {nullptr, now.empty() ? "missing" : "new", rule.threshold, nullptr});
      } else {
        const auto judgement = judge_change(now, then, metrics.metrics[0]->higher_is_better, rule);
        const auto power = run_sd ? nlohmann::json(detection_power(*run_sd, now.size(), then.size(), 0.10, rule))
                                  : nlohmann::json(nullptr);
        row.insert(row.end(), {judgement.p_value, judgement.verdict, rule.threshold, power});
      }
    }
    if (scaling && several_ranks) {
      const auto single = one_rank.find(other_axes(group.key));
      const auto& ranks = group.key[ranks_at];
      const auto efficiency = single != one_rank.end() && ranks.is_number_integer()
                                  ? scaling_efficiency(current[throughput], single->second->samples[0][throughput],
                                                       ranks.get<double>(), options.seed)
                                  : EstimateCells{};
      row.insert(row.end(), efficiency.begin(), efficiency.end());
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// "--compare AXIS=REFERENCE,*": each other value of the axis against the
// reference, one comparison after another, stacked; the other value leads
// each row, and its columns are suffixed ":other".
std::optional<Table> compare_each_against(Database& database, const QueryOptions& options) {
  const auto equals = options.compare.find('=');
  if (equals == std::string::npos || !options.compare.ends_with(",*")) return std::nullopt;
  const Axis* axis = &axis_named(options.compare.substr(0, equals), "--compare");
  const auto reference = options.compare.substr(equals + 1, options.compare.size() - equals - 3);
  auto others = comparable_values(database, condition_of(database, options.filter), *axis);
  const bool present = std::erase(others, reference) > 0;
  if (!present || others.empty()) {
    throw InvalidInput("--compare", "expected AXIS=REFERENCE,* with REFERENCE and another value of '" + axis->name +
                                        "' in the results, got '" + options.compare + "'");
  }
  Table stacked;
  for (const auto& other : others) {
    auto one = options;
    one.compare = axis->name + "=" + reference + "," + other;
    auto table = query(database, one);
    if (stacked.columns.empty()) {
      stacked.columns.push_back(axis->name);
      for (const auto& column : table.columns) {
        stacked.columns.push_back(
            column.ends_with(":" + other) ? column.substr(0, column.size() - other.size()) + "other" : column);
      }
    }
    for (auto& row : table.rows) {
      row.insert(row.begin(), other);
      stacked.rows.push_back(std::move(row));
    }
  }
  return stacked;
}

}  // namespace

Table query(Database& database, const QueryOptions& options) {
  if (auto stacked = compare_each_against(database, options)) return std::move(*stacked);
  if (!options.compare.empty() && !options.baseline.empty()) {
    throw InvalidInput("--compare", "--compare and --baseline cannot be combined; run two queries");
  }
  const auto condition = condition_of(database, options.filter);
  auto group_names = options.group_by;
  if (group_names.empty()) group_names = configuration_axes_present(database, condition);
  std::vector<std::string> metric_names = options.metrics;
  if (metric_names.empty()) metric_names = {"epoch_time", "samples_per_s", "peak_memory"};
  // Real against synthetic data: how long each waited for its batches.
  if (options.metrics.empty() && options.compare.starts_with("data")) {
    metric_names.insert(metric_names.end(), {"input_stall", "loader_throughput"});
  }
  if (options.compare.empty())
    return summary_table(database, condition, options, group_names, MetricList(metric_names));
  const auto comparison = comparison_of(database, condition, options.compare);
  std::erase(group_names, comparison.axis->name);
  return compared_table(database, condition, options, comparison, group_names, MetricList(metric_names));
}

Table adaptive_stops(Database& database, const ResultFilter& filter) {
  std::vector<std::string> ids;
  for (const auto& sweep : filter.sweeps) ids.push_back(resolve_sweep(database, sweep, "--sweep"));
  std::string sql =
      "SELECT a.sweep_id, s.name, a.pair_key, a.rounds, a.half_width, a.state, a.power FROM adaptive_pairs a "
      "JOIN sweeps s USING (sweep_id)";
  if (!ids.empty()) sql += " WHERE a.sweep_id IN (" + placeholders(ids.size()) + ")";
  auto select = database.prepare(sql + " ORDER BY s.rowid, a.pair_key");
  bind_texts(select, ids);
  static const std::map<std::string, std::string> why{
      {"running", "still adding rounds"},
      {"converged", "the speedup interval became as narrow as the sweep asks"},
      {"max_reached", "ran its maximum of rounds with the interval still wider"}};
  static const std::map<std::string, std::string> why_power{
      {"running", "still adding rounds"},
      {"converged", "the regression rule has the power the sweep asks"},
      {"max_reached", "ran its maximum of rounds with the power still lower"}};
  Table table{{"sweep", "name", "configuration", "rounds", "half_width", "power", "state", "why"}, {}};
  const auto real_or_null = [&](int column) {
    return select.is_null(column) ? nlohmann::json(nullptr) : nlohmann::json(select.real(column));
  };
  while (select.step()) {
    const auto state = select.text(5);
    const auto& reasons = select.is_null(6) ? why : why_power;
    table.rows.push_back({select.text(0), select.text(1), select.text(2), select.integer(3), real_or_null(4),
                          real_or_null(6), state, reasons.contains(state) ? reasons.at(state) : state});
  }
  return table;
}

std::string resolve_baseline(Database& database, const std::string& baseline, const ResultFilter& current) {
  return baseline_sweep(database, baseline, condition_of(database, current));
}

std::vector<std::string> configurations_of(Database& database, const ResultFilter& filter) {
  const auto condition = condition_of(database, filter);
  auto select =
      database.prepare("SELECT DISTINCT j.config_key FROM results r JOIN jobs j ON j.job_id = r.job_id WHERE " +
                       condition.sql + " ORDER BY 1");
  bind_condition(select, condition);
  std::vector<std::string> keys;
  while (select.step()) keys.push_back(select.text(0));
  return keys;
}

}  // namespace ts::readers

namespace ts::readers {

Table suite_summary(Database& database, const QueryOptions& options, const std::vector<std::string>& summary_by) {
  if (options.compare.empty()) throw InvalidInput("--summary", "summarises a comparison: give --compare too");
  for (const auto& axis : summary_by) axis_named(axis, "--group-by");
  auto passed_options = options;
  passed_options.group_by.clear();  // every configuration axis: one row a configuration
  auto ran_options = passed_options;
  ran_options.filter.include_failed = true;
  const auto key_of = [&](const nlohmann::json& row) {
    nlohmann::json key = nlohmann::json::array();
    for (const auto& axis : summary_by) key.push_back(row.value(axis, nlohmann::json()));
    return key;
  };
  struct Tally {
    int64_t configurations = 0, passed = 0, inaccurate = 0;
    double log_sum = 0;
  };
  std::map<std::string, std::pair<nlohmann::json, Tally>> tallies;  // by the key's text, in its order
  for (const auto& row : row_objects(query(database, ran_options))) {
    auto& [key, tally] = tallies[key_of(row).dump()];
    key = key_of(row);
    ++tally.configurations;
  }
  for (const auto& row : row_objects(query(database, passed_options))) {
    const auto speedup = row.value("speedup", nlohmann::json());
    if (!speedup.is_number() || speedup.get<double>() <= 0) continue;
    auto& [key, tally] = tallies[key_of(row).dump()];
    // As the compiler dashboard counts: fast and wrong does not pass (docs/compiler.md).
    if (row.value("inaccurate", int64_t{0}) > 0) {
      ++tally.inaccurate;
      continue;
    }
    ++tally.passed;
    tally.log_sum += std::log(speedup.get<double>());
  }
  Table table;
  table.columns = summary_by;
  table.columns.insert(table.columns.end(), {"configurations", "passed", "inaccurate", "geomean_speedup"});
  for (const auto& [text, entry] : tallies) {
    const auto& [key, tally] = entry;
    std::vector<nlohmann::json> row(key.begin(), key.end());
    row.insert(row.end(),
               {tally.configurations, tally.passed, tally.inaccurate,
                tally.passed > 0 ? nlohmann::json(std::exp(tally.log_sum / static_cast<double>(tally.passed)))
                                 : nlohmann::json(nullptr)});
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace ts::readers
