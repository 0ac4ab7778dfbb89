#include "readers/regression_records.hpp"

#include "readers/explanation.hpp"
#include "readers/labels.hpp"
#include "readers/why_section.hpp"
#include "shared/digest.hpp"
#include "shared/errors.hpp"

namespace ts::readers {

using nlohmann::json;

std::string regression_id(const std::string& sweep_id, const std::string& baseline_id, const json& configuration) {
  return "r-" + sha256_hex(json{sweep_id, baseline_id, configuration}.dump()).substr(0, 12);
}

std::vector<json> regression_records(Database& database, const Table& table, const ResultFilter& current,
                                     const std::string& baseline_id, const std::string& metric) {
  if (current.sweeps.size() != 1) throw std::logic_error("regression_records: the night is one sweep");
  std::vector<json> records;
  for (const auto& row : row_objects(table)) {
    const auto classification = row.value("classification", json(nullptr));
    if (row.value("verdict", json(nullptr)) != "regressed" || !classification.is_string()) continue;
    json configuration = json::object();
    for (const auto& axis : configuration_axes()) {
      if (row.contains(axis) && !row.at(axis).is_null()) configuration[axis] = row.at(axis);
    }
    // The job a bisection runs, and the versions each night ran, from the two sides explain would compare.
    json job = nullptr, versions = json::array({json::array(), json::array()});
    try {
      const auto sides = explain_sides(database, regression_explanation(row, current, baseline_id));
      job = sides[1].job;
      for (std::size_t side = 0; side < 2; ++side) versions[side] = sides[side].torch_versions;
    } catch (const InvalidInput&) {
      // A group of several configurations: kept, without a job to bisect.
    }
    records.push_back({{"regression_id", regression_id(current.sweeps.front(), baseline_id, configuration)},
                       {"sweep_id", current.sweeps.front()},
                       {"baseline_sweep_id", baseline_id},
                       {"configuration", configuration},
                       {"job", job},
                       {"metric", metric},
                       {"change", row.value("change", json(nullptr))},
                       {"p_value", row.value("p_value", json(nullptr))},
                       {"threshold", row.value("threshold", json(nullptr))},
                       {"classification", classification},
                       {"torch_versions", versions}});
  }
  return records;
}

std::optional<json> stored_regression(Database& database, const std::string& id) {
  auto select = database.prepare(
      "SELECT regression_id, recorded_at, sweep_id, baseline_sweep_id, configuration, job, metric, change, p_value, "
      "threshold, classification, torch_versions FROM regressions WHERE regression_id = ?");
  select.bind_all(id);
  if (!select.step()) return std::nullopt;
  const auto parsed = [&](int column) {
    return select.is_null(column) ? json(nullptr) : json::parse(select.text(column));
  };
  const auto real = [&](int column) { return select.is_null(column) ? json(nullptr) : json(select.real(column)); };
  return json{{"regression_id", select.text(0)},
              {"recorded_at", select.text(1)},
              {"sweep_id", select.text(2)},
              {"baseline_sweep_id", select.text(3)},
              {"configuration", parsed(4)},
              {"job", parsed(5)},
              {"metric", select.text(6)},
              {"change", real(7)},
              {"p_value", real(8)},
              {"threshold", real(9)},
              {"classification", select.text(10)},
              {"torch_versions", parsed(11)}};
}

Table regressions_table(Database& database, const ResultFilter& filter) {
  Table table{{"regression", "recorded_at", "sweep", "baseline", "configuration", "metric", "change", "p_value",
               "threshold", "classification", "torch_before", "torch_after"},
              {}};
  std::string sql =
      "SELECT r.regression_id, r.recorded_at, r.sweep_id, r.baseline_sweep_id, r.configuration, r.metric, r.change, "
      "r.p_value, r.threshold, r.classification, r.torch_versions FROM regressions r JOIN sweeps s ON s.sweep_id = "
      "r.sweep_id";
  std::string names;
  for (std::size_t i = 0; i < filter.sweeps.size(); ++i) names += (i ? ", ?" : "?");
  if (!names.empty()) sql += " WHERE s.sweep_id IN (" + names + ") OR s.name IN (" + names + ")";
  auto select = database.prepare(sql + " ORDER BY r.recorded_at DESC, r.regression_id");
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < filter.sweeps.size(); ++i) {
      select.bind(static_cast<int>(pass * filter.sweeps.size() + i + 1), filter.sweeps[i]);
    }
  }
  while (select.step()) {
    const auto versions = json::parse(select.text(10));
    const auto joined = [](const json& list) {
      std::string text;
      for (const auto& version : list) text += (text.empty() ? "" : " ") + version.get<std::string>();
      return text;
    };
    table.rows.push_back({select.text(0), select.text(1), select.text(2), select.text(3),
                          label_of(json::parse(select.text(4)), configuration_axes()), select.text(5),
                          select.is_null(6) ? json(nullptr) : json(select.real(6)),
                          select.is_null(7) ? json(nullptr) : json(select.real(7)),
                          select.is_null(8) ? json(nullptr) : json(select.real(8)), select.text(9),
                          joined(versions.at(0)), joined(versions.at(1))});
  }
  return table;
}

}  // namespace ts::readers
