#include "readers/compiler_figures.hpp"

#include <algorithm>
#include <string>

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
  options.filter.where.emplace_back("mode", "compiled");
  options.metrics = {"compile_time"};
  options.compare = "compile_cache=cold,warm";
  auto rows = nlohmann::json::array();
  for (const auto& row : row_objects(query(database, options))) {
    const auto &cold = row.at("compile_time_s:cold"), &warm = row.at("compile_time_s:warm");
    if (cold.is_null() || warm.is_null()) continue;
    rows.push_back(
        {{"configuration", label_of(row, configuration_axes_without("mode"))}, {"cold_s", cold}, {"warm_s", warm}});
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
