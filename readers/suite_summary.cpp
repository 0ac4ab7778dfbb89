#include <cmath>
#include <map>

#include "readers/query.hpp"
#include "shared/errors.hpp"

namespace ts::readers {

// As PyTorch's compiler dashboard summarises a suite (docs/compiler.md).
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
