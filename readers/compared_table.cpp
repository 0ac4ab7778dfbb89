#include <set>

#include "readers/comparisons.hpp"
#include "readers/grouping.hpp"
#include "readers/query_tables.hpp"
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
nlohmann::json memory_field_text(const Metric& metric, const std::set<std::string>& reference,
                                 const std::set<std::string>& other) {
  if (reference.empty() && other.empty()) return nullptr;
  if (reference == other) return metric.name + ": " + joined(reference);
  return metric.name + ": " + joined(reference) + " vs " + joined(other) + " (not comparable)";
}

// The values of `axis` a comparison can name: results without one (the
// worker at a path of its own has no environment) have nothing to be
// compared as.
std::vector<std::string> comparable_values(Database& database, const Condition& condition, const Axis& axis) {
  auto values = values_of(database, condition, axis);
  std::erase(values, std::string());
  return values;
}

}  // namespace

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
  // A compiled (or graph) mode against eager: when the compile pays for itself.
  const bool by_mode = comparison.axis->name == "mode" || comparison.axis->name == "requested_mode";
  const auto eager_at = static_cast<std::size_t>(
      std::find(comparison.values.begin(), comparison.values.end(), "eager") - comparison.values.begin());
  const std::size_t step = metrics.index_of(metric_named("step_time"));
  const std::size_t compile = metrics.index_of(metric_named("compile_time"));

  // The axes that follow the compared one (each runner's environment) are
  // each side's own: taken out of the key both sides share, put last.
  std::vector<std::string> pair_names, side_names;
  for (const auto& name : group_names) {
    const auto& follows = axis_named(name, "--group-by").follows;
    const bool own = std::find(follows.begin(), follows.end(), comparison.axis->name) != follows.end();
    (own ? side_names : pair_names).push_back(name);
  }
  auto key_names = pair_names;
  key_names.insert(key_names.end(), side_names.begin(), side_names.end());

  Grouping grouping;
  const Collection collection{.keys = axes_named(key_names),
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
  if (!side_names.empty()) grouping = paired_across(grouping, side_names.size());
  sort_by_key(grouping);

  Table table{pair_names, {}};
  for (const auto& name : side_names) {
    for (const auto& value : comparison.values) table.columns.push_back(name + ":" + value);
  }
  for (const auto& value : comparison.values) table.columns.push_back("runs:" + value);
  for (std::size_t m = 0; m < metrics.shown; ++m) {
    for (const auto& value : comparison.values) table.columns.push_back(metrics.metrics[m]->column + ":" + value);
  }
  for (const char* column : {"speedup", "speedup_low", "speedup_high", "memory_reduction", "memory_reduction_low",
                             "memory_reduction_high", "memory_field", "inaccurate", "busy", "paired"})
    table.columns.push_back(column);
  if (by_mode) table.columns.push_back("break_even_iters");
  for (const auto& group : grouping.groups) {
    auto row = group.key;
    const auto& [reference_side, other_side] = group.sides;
    const auto& reference = reference_side.samples;
    const auto& other = other_side.samples;
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
    const auto reduction = reference_side.fields == other_side.fields
                               ? memory_reduction(reference[memory], other[memory], options.seed)
                               : EstimateCells{};
    row.insert(row.end(), reduction.begin(), reduction.end());
    row.push_back(memory_field_text(*memory_metric, reference_side.fields, other_side.fields));
    // A speedup of a model that computes something else is no speedup (docs/compiler.md).
    row.push_back(reference_side.inaccurate + other_side.inaccurate);
    row.push_back(reference_side.busy + other_side.busy);  // runs of either side taken on a busy node
    row.push_back(reference_side.paired + other_side.paired);
    if (by_mode && eager_at < 2) {
      const auto& eager = group.sides[eager_at].samples;
      const auto& compiled = group.sides[1 - eager_at].samples;
      row.push_back(break_even_iterations(compiled[compile], eager[step], compiled[step]));
    } else if (by_mode) {
      row.push_back(nullptr);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// One comparison after another; the other value leads each row, and its
// columns are suffixed ":other".
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

}  // namespace ts::readers
