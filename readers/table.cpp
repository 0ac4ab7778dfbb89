#include "readers/table.hpp"

#include <algorithm>
#include <stdexcept>

namespace ts::readers {

std::size_t column_of(const Table& table, const std::string& name) {
  const auto found = std::find(table.columns.begin(), table.columns.end(), name);
  if (found == table.columns.end()) throw std::out_of_range("no column '" + name + "'");
  return static_cast<std::size_t>(found - table.columns.begin());
}

nlohmann::json row_objects(const Table& table) {
  auto rows = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < table.columns.size(); ++c) object[table.columns[c]] = row[c];
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace ts::readers
