#include "readers/export.hpp"

#include <nlohmann/json.hpp>

#include "store/result_columns.hpp"

namespace ts::readers {

namespace {

// How a column's SQLite value becomes a cell: text covers strings and
// timestamps (ISO 8601 text in the store), integer covers int64 and bool.
enum class CellKind { real, integer, text };

CellKind kind_of(const std::string& type) {
  if (type == "float64") return CellKind::real;
  if (type == "int64" || type == "bool") return CellKind::integer;
  return CellKind::text;
}

const store::ColumnTable& table_named(const std::string& table) { return store::column_tables().at(table); }

}  // namespace

const std::vector<std::string>& export_tables() {
  static const auto names = [] {
    std::vector<std::string> keys;
    for (const auto& [name, table] : store::column_tables()) keys.push_back(name);
    return keys;
  }();
  return names;
}

const std::vector<ExportColumn>& export_columns(const std::string& table) { return table_named(table).columns; }

Table export_table(Database& database, const ResultFilter& filter, const std::string& table) {
  const auto& spec = table_named(table);
  const auto condition = condition_of(database, filter);
  // The filter is on the results (alias r); a step goes with its result.
  const std::string alias = spec.source == "results" ? "r." : "t.";
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < spec.columns.size(); ++i) sql += (i ? ", " : "") + alias + spec.columns[i].name;
  sql += spec.source == "results" ? " FROM results r"
                                  : " FROM " + spec.source + " t JOIN results r USING (job_id, attempt)";
  sql += " WHERE " + condition.sql + " ORDER BY ";
  for (std::size_t i = 0; i < spec.order.size(); ++i) sql += (i ? ", " : "") + alias + spec.order[i];
  auto select = database.prepare(sql);
  bind_condition(select, condition);
  Table out;
  std::vector<CellKind> kinds;  // per column, decided once rather than per cell
  for (const auto& column : spec.columns) {
    out.columns.push_back(column.name);
    kinds.push_back(kind_of(column.type));
  }
  while (select.step()) {
    std::vector<nlohmann::json> row;
    row.reserve(spec.columns.size());
    for (int c = 0; c < static_cast<int>(spec.columns.size()); ++c) {
      if (select.is_null(c)) {
        row.emplace_back(nullptr);
        continue;
      }
      switch (kinds[static_cast<std::size_t>(c)]) {
        case CellKind::real:
          row.emplace_back(select.real(c));
          break;
        case CellKind::integer:
          row.emplace_back(select.integer(c));
          break;
        case CellKind::text:
          row.emplace_back(select.text(c));
          break;
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace ts::readers
