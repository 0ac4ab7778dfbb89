#include "readers/query.hpp"

#include <map>

#include "readers/query_tables.hpp"
#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"

namespace ts::readers {
namespace {

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
