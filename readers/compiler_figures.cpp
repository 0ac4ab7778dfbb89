#include "readers/compiler_figures.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "readers/grouping.hpp"
#include "readers/labels.hpp"
#include "readers/sql_parts.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {
namespace {

constexpr int kListedReasons = 20;

nlohmann::json speedup_points(const Table& by_mode) {
  auto points = nlohmann::json::array();
  for (const auto& row : row_objects(by_mode)) {
    const auto& compile = row.at("compile_time_s:compiled");
    if (row.at("speedup").is_null() || compile.is_null()) continue;
    points.push_back({{"configuration", label_of(row, configuration_axes_without("mode"))},
                      {"compile_s", compile},
                      {"speedup", row.at("speedup")},
                      {"break_even_iters", row.at("break_even_iters")},
                      {"inaccurate", row.at("inaccurate")}});
  }
  return points;
}

nlohmann::json accuracy_by_runner(Database& database, const Condition& condition) {
  auto select = database.prepare(
      "SELECT r.runner, COALESCE(r.compile_mode, r.compiler), SUM(r.accuracy = 'pass'), SUM(r.accuracy = 'fail'), "
      "SUM(r.accuracy = 'skipped') FROM results r WHERE " +
      condition.sql + " AND r.accuracy IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2");
  bind_condition(select, condition);
  auto rows = nlohmann::json::array();
  while (select.step()) {
    rows.push_back({{"runner", select.text(0)},
                    {"mode", select.is_null(1) ? std::string() : select.text(1)},
                    {"passed", select.integer(2)},
                    {"failed", select.integer(3)},
                    {"skipped", select.integer(4)}});
  }
  return rows;
}

nlohmann::json break_reasons(Database& database, const Condition& condition) {
  auto select = database.prepare(
      "SELECT json_extract(b.value, '$.reason'), SUM(json_extract(b.value, '$.count')), COUNT(DISTINCT r.job_id), "
      "group_concat(DISTINCT r.model) FROM results r JOIN result_documents d ON d.job_id = r.job_id AND d.attempt = "
      "r.attempt, json_each(d.document, '$.execution.compile.top_break_reasons') b WHERE " +
      condition.sql + " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT " + std::to_string(kListedReasons));
  bind_condition(select, condition);
  auto rows = nlohmann::json::array();
  while (select.step()) {
    rows.push_back({{"reason", select.text(0)},
                    {"breaks", select.integer(1)},
                    {"runs", select.integer(2)},
                    {"models", select.text(3)}});
  }
  return rows;
}

nlohmann::json cold_against_warm(Database& database, QueryOptions options) {
  const auto present =
      values_of(database, condition_of(database, options.filter), axis_named("compile_cache", "--compare"));
  if (std::find(present.begin(), present.end(), "cold") == present.end() ||
      std::find(present.begin(), present.end(), "warm") == present.end()) {
    return nlohmann::json::array();
  }
  // One mode comparison grouped by the compiled side's cache (eager runs have
  // none): each cache state's compile time and break-even against eager.
  options.metrics = {"compile_time"};
  options.compare = "mode";
  options.group_by = configuration_axes();
  options.group_by.push_back("compile_cache");
  const auto axes = configuration_axes_without("mode");
  std::vector<std::string> labels;  // in the comparison's order
  std::map<std::string, nlohmann::json> caches;
  for (const auto& row : row_objects(query(database, options))) {
    const auto& cache = row.at("compile_cache:compiled");
    if (cache != "cold" && cache != "warm") continue;
    const auto label = label_of(row, axes);
    if (!caches.contains(label)) labels.push_back(label);
    auto& entry = caches[label];
    entry[json_text(cache) + "_s"] = row.at("compile_time_s:compiled");
    entry[json_text(cache) + "_break_even_iters"] = row.at("break_even_iters");
  }
  auto rows = nlohmann::json::array();
  for (const auto& label : labels) {
    const auto& entry = caches.at(label);
    const auto figure = [&](const char* name) { return entry.value(name, nlohmann::json()); };
    if (figure("cold_s").is_null() || figure("warm_s").is_null()) continue;
    rows.push_back({{"configuration", label},
                    {"cold_s", figure("cold_s")},
                    {"warm_s", figure("warm_s")},
                    {"cold_break_even_iters", figure("cold_break_even_iters")},
                    {"warm_break_even_iters", figure("warm_break_even_iters")}});
  }
  return rows;
}

}  // namespace

nlohmann::json compiler_figures(Database& database, const QueryOptions& options, const Table& by_mode) {
  const auto condition = condition_of(database, options.filter);
  return {{"points", speedup_points(by_mode)},
          {"accuracy", accuracy_by_runner(database, condition)},
          {"break_reasons", break_reasons(database, condition)},
          {"cache", cold_against_warm(database, options)}};
}

}  // namespace ts::readers
