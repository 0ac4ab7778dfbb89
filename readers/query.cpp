#include "readers/query.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <format>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "readers/sql_parts.hpp"
#include "readers/vocabulary.hpp"
#include "shared/errors.hpp"
#include "shared/statistics.hpp"
#include "shared/timestamp.hpp"
#include "store/store.hpp"

namespace ts::readers {

using store::Statement;

namespace {

nlohmann::json cell(Statement& row, int column) {
  if (row.is_null(column)) return nullptr;
  const auto text = row.text(column);
  int64_t integer = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
      error == std::errc() && end == text.data() + text.size()) {
    return integer;
  }
  return text;
}

struct Group {
  std::vector<nlohmann::json> key;
  std::array<int64_t, 2> flagged{};             // runs flagged noisy or warmup_insufficient, per side
  std::array<std::set<std::string>, 2> fields;  // per side: where the figures of `field_metric` came from
  // samples[side][metric]: per-run values (side 0: the reference or the
  // filtered results, side 1: the other compared value or the baseline)
  std::array<std::vector<std::vector<double>>, 2> samples;
};

struct Grouping {
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> index;
};

// Adds every row of the filtered results to its group; `side_of` picks the
// side a row counts on (or -1 to skip it).
// `field_metric`: the metric whose source fields each group records.
void collect(Database& database, const Condition& condition, const std::vector<const Axis*>& keys,
             const std::vector<const Metric*>& metrics, const Axis* side_axis,
             const std::function<int(const nlohmann::json&)>& side_of, int fixed_side, Grouping& grouping,
             const Metric* field_metric = nullptr) {
  std::string sql = "SELECT ";
  for (const auto* axis : keys) sql += axis->sql + ", ";
  sql += side_axis ? side_axis->sql : "NULL";
  sql += ", COALESCE(r.noisy, 0) + COALESCE(r.warmup_insufficient, 0) > 0";
  sql += ", " + (field_metric ? field_metric->field_sql : std::string("NULL"));
  for (const auto* metric : metrics) sql += ", " + metric->sql;
  sql += " FROM results r WHERE " + condition.sql;
  auto select = database.prepare(sql);
  bind_condition(select, condition);
  const int key_count = static_cast<int>(keys.size());
  std::string key_text;
  while (select.step()) {
    const int side = side_axis ? side_of(cell(select, key_count)) : fixed_side;
    if (side < 0) continue;
    key_text.clear();
    for (int k = 0; k < key_count; ++k) {
      if (select.is_null(k)) {
        key_text += '\x01';
      } else {
        key_text += select.text_view(k);
      }
      key_text += '\x1f';
    }
    auto [found, inserted] = grouping.index.try_emplace(key_text, grouping.groups.size());
    if (inserted) {
      Group group;
      for (int k = 0; k < key_count; ++k) group.key.push_back(cell(select, k));
      for (auto& side_samples : group.samples) side_samples.resize(metrics.size());
      grouping.groups.push_back(std::move(group));
    }
    auto& group = grouping.groups[found->second];
    group.flagged[static_cast<std::size_t>(side)] += select.integer(key_count + 1);
    if (!select.is_null(key_count + 2)) group.fields[static_cast<std::size_t>(side)].insert(select.text(key_count + 2));
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const int column = key_count + 3 + static_cast<int>(m);
      if (!select.is_null(column)) group.samples[side][m].push_back(select.real(column) * metrics[m]->scale);
    }
  }
}

std::size_t runs_a_side(const std::vector<double>& a, const std::vector<double>& b) {
  return std::min(a.size(), b.size());
}

// The estimate and its interval's bounds as three cells; below the minimum
// runs a side the bounds are null (rendered "n too small"): an interval of
// two runs would claim a precision that is not there.
void append_estimate(std::vector<nlohmann::json>& row, const stats::Interval& interval, std::size_t runs) {
  if (runs >= stats::minimum_runs_for_interval) {
    row.insert(row.end(), {interval.estimate, interval.low, interval.high});
  } else {
    row.insert(row.end(), {interval.estimate, nullptr, nullptr});
  }
}

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

nlohmann::json median_or_null(const std::vector<double>& samples) {
  return samples.empty() ? nlohmann::json(nullptr) : nlohmann::json(stats::median(samples));
}

// The values of `axis` present in the filtered results, sorted.
std::vector<std::string> values_of(Database& database, const Condition& condition, const Axis& axis) {
  auto select =
      database.prepare("SELECT DISTINCT " + axis.sql + " FROM results r WHERE " + condition.sql + " ORDER BY 1");
  bind_condition(select, condition);
  std::vector<std::string> values;
  while (select.step()) values.push_back(select.is_null(0) ? "" : select.text(0));
  return values;
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

}  // namespace

namespace {

// "--compare AXIS=REFERENCE,*": each other value of the axis against the
// reference, one comparison after another, stacked; the other value leads
// each row, and its columns are suffixed ":other".
std::optional<Table> compare_each_against(Database& database, const QueryOptions& options) {
  const auto equals = options.compare.find('=');
  if (equals == std::string::npos || !options.compare.ends_with(",*")) return std::nullopt;
  const Axis* axis = &axis_named(options.compare.substr(0, equals), "--compare");
  const auto reference = options.compare.substr(equals + 1, options.compare.size() - equals - 3);
  auto others = values_of(database, condition_of(database, options.filter), *axis);
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
  const auto condition = condition_of(database, options.filter);
  auto group_names = options.group_by;
  if (group_names.empty()) {
    group_names = {"model", "task", "batch_size", "precision", "mode", "gpus", "device_name", "runner", "data"};
  }
  std::vector<std::string> metric_names = options.metrics;
  if (metric_names.empty()) metric_names = {"epoch_time", "samples_per_s", "peak_memory"};
  // Real against synthetic data: how long each waited for its batches.
  if (options.metrics.empty() && options.compare.starts_with("data")) {
    metric_names.insert(metric_names.end(), {"input_stall", "loader_throughput"});
  }
  if (!options.compare.empty() && !options.baseline.empty()) {
    throw InvalidInput("--compare", "--compare and --baseline cannot be combined; run two queries");
  }

  // The comparison: an axis and its two values, reference first.
  const Axis* compare_axis = nullptr;
  std::array<std::string, 2> compared;
  if (!options.compare.empty()) {
    const auto equals = options.compare.find('=');
    compare_axis = &axis_named(options.compare.substr(0, equals), "--compare");
    if (equals != std::string::npos) {
      const auto list = options.compare.substr(equals + 1);
      const auto comma = list.find(',');
      if (comma == std::string::npos || comma == 0 || comma + 1 == list.size() ||
          list.find(',', comma + 1) != std::string::npos) {
        throw InvalidInput("--compare", "expected AXIS or AXIS=REFERENCE,OTHER, got '" + options.compare + "'");
      }
      compared = {list.substr(0, comma), list.substr(comma + 1)};
    } else if (compare_axis->name == "mode" || compare_axis->name == "requested_mode") {
      compared = {"eager", "compiled"};
    } else if (compare_axis->name == "data") {
      // Real data against synthetic: the speedup is then real / synthetic throughput.
      auto present = values_of(database, condition, *compare_axis);
      std::erase(present, std::string("synthetic"));
      if (present.size() != 1) {
        throw InvalidInput("--compare", "the results have " + std::to_string(present.size()) +
                                            " imagefolder datasets; name one as data=synthetic,FOLDER or compare "
                                            "each with data=synthetic,*");
      }
      compared = {"synthetic", present[0]};
    } else {
      const auto present = values_of(database, condition, *compare_axis);
      if (present.size() != 2) {
        throw InvalidInput("--compare", "the results have " + std::to_string(present.size()) + " values of '" +
                                            compare_axis->name + "'; name two as " + compare_axis->name + "=A,B");
      }
      compared = {present[0], present[1]};
    }
    std::erase(group_names, compare_axis->name);
  }

  std::vector<const Axis*> keys;
  for (const auto& name : group_names) keys.push_back(&axis_named(name, "--group-by"));
  std::vector<const Metric*> metrics;
  for (const auto& name : metric_names) metrics.push_back(&metric_named(name));
  // Speedups and memory reductions need these even when they are not shown.
  const auto index_of = [&](const std::string& name) {
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      if (metrics[m]->name == name) return m;
    }
    metrics.push_back(&metric_named(name));
    return metrics.size() - 1;
  };
  const std::size_t shown_metrics = metric_names.size();
  std::size_t epoch_metric = 0, memory_metric = 0;
  if (compare_axis) {
    epoch_metric = index_of("epoch_time");
    const Metric* memory = &metric_named(options.memory_metric, "--memory-metric");
    if (memory->field_sql == "NULL") {
      throw InvalidInput("--memory-metric",
                         "expected peak_memory, warmup_memory or reserved_memory, got '" + options.memory_metric + "'");
    }
    memory_metric = index_of(memory->name);
  }
  // Scaling efficiency: each group against the same configuration on one rank.
  const auto ranks_at =
      static_cast<std::size_t>(std::find(group_names.begin(), group_names.end(), "gpus") - group_names.begin());
  const bool scaling = !compare_axis && options.baseline.empty() && ranks_at < group_names.size();
  const std::size_t throughput_metric = scaling ? index_of("samples_per_s") : 0;
  const auto other_axes = [&](std::vector<nlohmann::json> key) {
    key.erase(key.begin() + static_cast<std::ptrdiff_t>(ranks_at));
    return key;
  };

  Grouping grouping;
  if (compare_axis) {
    collect(
        database, condition, keys, metrics, compare_axis,
        [&](const nlohmann::json& value) {
          const auto text = json_text(value);
          return text == compared[0] ? 0 : text == compared[1] ? 1 : -1;
        },
        0, grouping, metrics[memory_metric]);
  } else {
    collect(database, condition, keys, metrics, nullptr, nullptr, 0, grouping);
  }
  std::string baseline_id;
  if (!options.baseline.empty()) {
    baseline_id = baseline_sweep(database, options.baseline, condition);
    ResultFilter baseline_filter;
    baseline_filter.sweeps = {baseline_id};  // the baseline's planned runs, whatever the filter's purpose
    baseline_filter.where = options.filter.where;
    baseline_filter.include_failed = options.filter.include_failed;
    collect(database, condition_of(database, baseline_filter), keys, metrics, nullptr, nullptr, 1, grouping);
  }

  Table table;
  for (const auto* axis : keys) table.columns.push_back(axis->name);
  std::sort(grouping.groups.begin(), grouping.groups.end(),
            [](const Group& a, const Group& b) { return a.key < b.key; });
  const stats::BootstrapOptions bootstrap{0.95, 2000, options.seed};

  if (compare_axis) {
    for (const auto& value : compared) table.columns.push_back("runs:" + value);
    for (std::size_t m = 0; m < shown_metrics; ++m) {
      for (const auto& value : compared) table.columns.push_back(metrics[m]->column + ":" + value);
    }
    for (const char* column : {"speedup", "speedup_low", "speedup_high", "memory_reduction", "memory_reduction_low",
                               "memory_reduction_high", "memory_field"})
      table.columns.push_back(column);
    for (const auto& group : grouping.groups) {
      auto row = group.key;
      const auto& reference = group.samples[0];
      const auto& other = group.samples[1];
      row.push_back(static_cast<int64_t>(reference[epoch_metric].size()));
      row.push_back(static_cast<int64_t>(other[epoch_metric].size()));
      for (std::size_t m = 0; m < shown_metrics; ++m) {
        row.push_back(median_or_null(reference[m]));
        row.push_back(median_or_null(other[m]));
      }
      // speedup = reference time / other time; memory reduction = 1 - other / reference.
      if (!reference[epoch_metric].empty() && !other[epoch_metric].empty()) {
        const auto speedup = stats::ratio_of_medians(reference[epoch_metric], other[epoch_metric], bootstrap);
        append_estimate(row, speedup, runs_a_side(reference[epoch_metric], other[epoch_metric]));
      } else {
        row.insert(row.end(), {nullptr, nullptr, nullptr});
      }
      // Figures of different kinds (a whole-process peak against a timed
      // phase's, say) are not compared.
      const bool same_kind = group.fields[0] == group.fields[1];
      if (same_kind && !reference[memory_metric].empty() && !other[memory_metric].empty() &&
          stats::median(reference[memory_metric]) > 0) {
        const auto ratio = stats::ratio_of_medians(other[memory_metric], reference[memory_metric], bootstrap);
        append_estimate(row, {1 - ratio.estimate, 1 - ratio.high, 1 - ratio.low},
                        runs_a_side(reference[memory_metric], other[memory_metric]));
      } else {
        row.insert(row.end(), {nullptr, nullptr, nullptr});
      }
      row.push_back(memory_field_text(*metrics[memory_metric], group.fields));
      table.rows.push_back(std::move(row));
    }
    return table;
  }

  table.columns.push_back("runs");
  table.columns.push_back("flagged");  // runs flagged noisy or warmup_insufficient
  if (!baseline_id.empty()) table.columns.push_back("baseline_runs");
  for (std::size_t m = 0; m < shown_metrics; ++m) {
    table.columns.push_back(metrics[m]->column);
    if (!baseline_id.empty()) {
      table.columns.push_back("baseline_" + metrics[m]->column);
      table.columns.push_back(metrics[m]->name + "_change");
    }
  }
  if (!baseline_id.empty()) {
    table.columns.push_back("p_value");
    table.columns.push_back("verdict");
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
    if (runs == 0 && baseline_id.empty()) continue;
    auto row = group.key;
    row.push_back(static_cast<int64_t>(current[0].size()));
    row.push_back(group.flagged[0]);
    if (!baseline_id.empty()) row.push_back(static_cast<int64_t>(base[0].size()));
    for (std::size_t m = 0; m < shown_metrics; ++m) {
      row.push_back(median_or_null(current[m]));
      if (baseline_id.empty()) continue;
      row.push_back(median_or_null(base[m]));
      if (!current[m].empty() && !base[m].empty() && stats::median(base[m]) != 0) {
        row.push_back(stats::median(current[m]) / stats::median(base[m]) - 1);
      } else {
        row.push_back(nullptr);
      }
    }
    if (!baseline_id.empty()) {
      // The rule of docs/query.md, on the first metric.
      const auto& now = current[0];
      const auto& then = base[0];
      if (now.empty() || then.empty()) {
        row.insert(row.end(), {nullptr, now.empty() ? "missing" : "new"});
      } else {
        const auto test = stats::mann_whitney_u(now, then);
        const double change = stats::median(then) != 0 ? stats::median(now) / stats::median(then) - 1 : 0;
        const double worse = metrics[0]->higher_is_better ? -change : change;
        std::string verdict = "same";
        if (test.p_value < options.regression_alpha && worse > options.regression_threshold) verdict = "regressed";
        if (test.p_value < options.regression_alpha && worse < -options.regression_threshold) verdict = "improved";
        row.insert(row.end(), {test.p_value, verdict});
      }
    }
    if (scaling && several_ranks) {
      // Throughput at N ranks / (N x throughput at 1), with the interval
      // of the ratio of the two medians.
      const auto single = one_rank.find(other_axes(group.key));
      const auto& ranks = group.key[ranks_at];
      if (single != one_rank.end() && ranks.is_number_integer() && !current[throughput_metric].empty() &&
          !single->second->samples[0][throughput_metric].empty()) {
        const double n = ranks.get<double>();
        const auto& reference = single->second->samples[0][throughput_metric];
        const auto ratio = stats::ratio_of_medians(current[throughput_metric], reference, bootstrap);
        append_estimate(row, {ratio.estimate / n, ratio.low / n, ratio.high / n},
                        runs_a_side(current[throughput_metric], reference));
      } else {
        row.insert(row.end(), {nullptr, nullptr, nullptr});
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table adaptive_stops(Database& database, const ResultFilter& filter) {
  std::vector<std::string> ids;
  for (const auto& sweep : filter.sweeps) ids.push_back(resolve_sweep(database, sweep, "--sweep"));
  std::string sql =
      "SELECT a.sweep_id, s.name, a.pair_key, a.rounds, a.half_width, a.state FROM adaptive_pairs a "
      "JOIN sweeps s USING (sweep_id)";
  if (!ids.empty()) sql += " WHERE a.sweep_id IN (" + placeholders(ids.size()) + ")";
  auto select = database.prepare(sql + " ORDER BY s.rowid, a.pair_key");
  bind_texts(select, ids);
  static const std::map<std::string, std::string> why{
      {"running", "still adding rounds"},
      {"converged", "the speedup interval became as narrow as the sweep asks"},
      {"max_reached", "ran its maximum of rounds with the interval still wider"}};
  Table table{{"sweep", "name", "configuration", "rounds", "half_width", "state", "why"}, {}};
  while (select.step()) {
    const auto state = select.text(5);
    table.rows.push_back({select.text(0), select.text(1), select.text(2), select.integer(3),
                          select.is_null(4) ? nlohmann::json(nullptr) : nlohmann::json(select.real(4)), state,
                          why.contains(state) ? why.at(state) : state});
  }
  return table;
}

Table export_results(Database& database, const ResultFilter& filter) {
  const auto condition = condition_of(database, filter);
  static const std::vector<std::string> columns{"job_id",
                                                "attempt",
                                                "sweep_id",
                                                "status",
                                                "model",
                                                "task",
                                                "batch_size",
                                                "precision",
                                                "mode",
                                                "mode_ran",
                                                "compiler",
                                                "runner",
                                                "gpus",
                                                "device_name",
                                                "torch_version",
                                                "host",
                                                "agent",
                                                "median_epoch_s",
                                                "samples_per_s",
                                                "median_step_s",
                                                "compile_s",
                                                "warmup_s",
                                                "peak_memory_bytes",
                                                "peak_memory_field",
                                                "peak_allocated_bytes",
                                                "peak_reserved_bytes",
                                                "warmup_peak_memory_bytes",
                                                "noisy",
                                                "warmup_insufficient",
                                                "flops_per_step",
                                                "achieved_flops_per_s",
                                                "peak_flops_per_s",
                                                "mfu",
                                                "fused_kernels",
                                                "fallback_reason",
                                                "error",
                                                "received_at"};
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) sql += (i ? ", r." : "r.") + columns[i];
  sql += " FROM results r WHERE " + condition.sql + " ORDER BY r.received_at, r.job_id, r.attempt";
  auto select = database.prepare(sql);
  bind_condition(select, condition);
  Table table{columns, {}};
  static const std::set<std::string> real_columns{
      "median_epoch_s", "samples_per_s",        "median_step_s",    "compile_s", "warmup_s",
      "flops_per_step", "achieved_flops_per_s", "peak_flops_per_s", "mfu"};
  while (select.step()) {
    std::vector<nlohmann::json> row;
    for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
      if (real_columns.contains(columns[c])) {
        row.push_back(select.is_null(c) ? nlohmann::json(nullptr) : nlohmann::json(select.real(c)));
      } else {
        row.push_back(cell(select, c));
      }
    }
    table.rows.push_back(std::move(row));
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
