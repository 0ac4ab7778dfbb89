#include "store/result_columns.hpp"

#include <nlohmann/json.hpp>

#include "shared/schema.hpp"

namespace ts::store {

const std::map<std::string, ColumnTable>& column_tables() {
  static const auto tables = [] {
    const auto document = nlohmann::json::parse(schema::text("result_columns.json"));
    std::map<std::string, ColumnTable> parsed;
    for (const auto& [name, table] : document.at("tables").items()) {
      auto& out = parsed[name];
      out.source = table.at("source").get<std::string>();
      out.order = table.at("order").get<std::vector<std::string>>();
      for (const auto& column : table.at("columns")) {
        out.columns.push_back({column.at("name").get<std::string>(), column.at("type").get<std::string>(),
                               column.value("mlflow", ""), column.value("nullable", true),
                               column.value("filled_by", "summary") == "store"});
      }
    }
    return parsed;
  }();
  return tables;
}

const ColumnTable& result_columns() { return column_tables().at("results"); }

}  // namespace ts::store
