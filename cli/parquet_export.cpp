#include "cli/parquet_export.hpp"

#include <nlohmann/json.hpp>

#include "cli/python_writer.hpp"
#include "readers/export.hpp"
#include "shared/errors.hpp"

namespace ts::cli {

void export_parquet(readers::Database& database, const readers::ResultFilter& filter,
                    const std::filesystem::path& folder) {
  if (folder.empty() || !std::filesystem::is_directory(folder)) {
    throw InvalidInput("--out", "expected an existing folder for the Parquet files, got '" + folder.string() + "'");
  }
  nlohmann::json tables = nlohmann::json::object();
  for (const auto& name : readers::export_tables()) {
    const auto table = readers::export_table(database, filter, name);
    nlohmann::json columns = nlohmann::json::array();
    for (const auto& column : readers::export_columns(name)) {
      columns.push_back({{"name", column.name}, {"type", column.type}});
    }
    tables[name] = {{"columns", columns}, {"rows", table.rows}};
  }
  run_writer("torchsweep-parquet", nlohmann::json{{"tables", tables}}, folder, {"--out", folder.string()}, "--out");
}

}  // namespace ts::cli
