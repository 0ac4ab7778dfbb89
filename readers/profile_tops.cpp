#include "readers/profile_tops.hpp"

#include <algorithm>
#include <map>

#include "readers/sql_parts.hpp"
#include "shared/statistics.hpp"
#include "store/configuration.hpp"

namespace ts::readers {
namespace {

using nlohmann::json;

struct Tops {
  int64_t runs = 0;
  std::map<std::string, std::vector<double>> operators, kernels;  // name -> its shares, a run each it topped
};

// The name most runs had on top (the first by name on a tie) and its median share; nulls for none.
std::pair<json, json> most_often(const std::map<std::string, std::vector<double>>& tops) {
  const std::vector<double>* best = nullptr;
  json name;
  for (const auto& [candidate, shares] : tops) {
    if (best == nullptr || shares.size() > best->size()) {
      best = &shares;
      name = candidate;
    }
  }
  if (best == nullptr) return {nullptr, nullptr};
  std::vector<double> known;
  for (const double share : *best) {
    if (share >= 0) known.push_back(share);
  }
  return {name, known.empty() ? json(nullptr) : json(stats::median(known))};
}

}  // namespace

Table profile_tops(Database& database, const ResultFilter& filter) {
  const auto& axes = store::configuration_axes();
  std::string select;
  for (const auto& axis : axes) select += axis.sql + ", ";
  const auto condition = condition_of(database, filter);
  auto rows = database.prepare("SELECT " + select +
                               "r.top_operator, r.top_operator_share, r.top_kernel, r.top_kernel_share FROM results r "
                               "WHERE r.top_operator IS NOT NULL AND " +
                               condition.sql + " ORDER BY r.received_at");
  bind_condition(rows, condition);
  std::map<json, Tops> by_configuration;
  const int first = static_cast<int>(axes.size());
  while (rows.step()) {
    json configuration = json::array();
    for (int a = 0; a < first; ++a) configuration.push_back(cell(rows, a));
    auto& tops = by_configuration[configuration];
    ++tops.runs;
    tops.operators[rows.text(first)].push_back(rows.is_null(first + 1) ? -1.0 : rows.real(first + 1));
    if (!rows.is_null(first + 2)) {
      tops.kernels[rows.text(first + 2)].push_back(rows.is_null(first + 3) ? -1.0 : rows.real(first + 3));
    }
  }
  Table table;
  for (const auto& axis : axes) table.columns.push_back(axis.name);
  for (const char* column : {"profiled_runs", "top_operator", "top_operator_share", "top_kernel", "top_kernel_share"}) {
    table.columns.emplace_back(column);
  }
  for (const auto& [configuration, tops] : by_configuration) {
    std::vector<json> row(configuration.begin(), configuration.end());
    const auto [top_operator, operator_share] = most_often(tops.operators);
    const auto [top_kernel, kernel_share] = most_often(tops.kernels);
    row.insert(row.end(), {tops.runs, top_operator, operator_share, top_kernel, kernel_share});
    table.rows.push_back(std::move(row));
  }
  // A sparse axis (a language model's lengths, an image's layout) only where a row has a value.
  for (std::size_t a = axes.size(); a-- > 0;) {
    const auto all_null =
        std::all_of(table.rows.begin(), table.rows.end(), [&](const auto& row) { return row[a].is_null(); });
    if (!axes[a].sparse || !all_null) continue;
    table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(a));
    for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(a));
  }
  return table;
}

}  // namespace ts::readers
