#pragma once
// What the read side answers with: a table of named columns and rows of
// JSON cells (numbers, strings or null). cli/table_renderer.hpp prints it.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::readers {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // numbers, strings or null
};

// The column index of `name` in `table`; throws std::out_of_range.
std::size_t column_of(const Table& table, const std::string& name);
// The rows as JSON objects keyed by column (what --format json prints).
nlohmann::json row_objects(const Table& table);

}  // namespace ts::readers
