#include "cli/mlflow_export.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/python_writer.hpp"
#include "readers/eager_partners.hpp"
#include "readers/export.hpp"
#include "readers/labels.hpp"

namespace ts::cli {

namespace {

std::string sweep_name(readers::Database& database, const std::string& sweep_id) {
  auto select = database.prepare("SELECT name FROM sweeps WHERE sweep_id = ?");
  select.bind_all(sweep_id);
  return select.step() ? select.text(0) : sweep_id;
}

// `select`: the result_documents lookup, prepared once for every result.
nlohmann::json document_of(readers::Statement& select, const readers::ResultKey& key) {
  select.bind_all(key.first, key.second);
  auto document = select.step() ? nlohmann::json::parse(select.text(0)) : nlohmann::json::object();
  select.reset();
  return document;
}

}  // namespace

void export_mlflow(readers::Database& database, const readers::ResultFilter& filter, const MlflowExport& target) {
  const auto* columns_of_results = &readers::export_columns("results");  // a pointer: GCC 14 -Wdangling-reference
  const auto& columns = *columns_of_results;
  nlohmann::json handed_columns = nlohmann::json::array();
  std::size_t job_column = 0, attempt_column = 0, sweep_column = 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    handed_columns.push_back({{"name", columns[i].name}, {"type", columns[i].type}, {"mlflow", columns[i].mlflow}});
    if (columns[i].name == "job_id") job_column = i;
    if (columns[i].name == "attempt") attempt_column = i;
    if (columns[i].name == "sweep_id") sweep_column = i;
  }
  const auto partners = readers::eager_partners(database, filter);
  std::map<std::string, std::string> sweep_names;
  auto documents = database.prepare("SELECT document FROM result_documents WHERE job_id = ? AND attempt = ?");
  nlohmann::json results = nlohmann::json::array();
  for (const auto& row : readers::export_table(database, filter, "results").rows) {
    const readers::ResultKey key{row[job_column].get<std::string>(), row[attempt_column].get<int64_t>()};
    const auto sweep_id = row[sweep_column].get<std::string>();
    if (!sweep_names.contains(sweep_id)) sweep_names[sweep_id] = sweep_name(database, sweep_id);
    nlohmann::json labelled = nlohmann::json::object();
    for (std::size_t i = 0; i < columns.size(); ++i) labelled[columns[i].name] = row[i];
    nlohmann::json entry{{"row", row},
                         {"document", document_of(documents, key)},
                         {"sweep_name", sweep_names[sweep_id]},
                         {"label", readers::label_of(labelled, readers::configuration_axes())}};
    if (const auto partner = partners.find(key); partner != partners.end()) {
      const auto& [eager, speedup] = partner->second;
      entry["eager"] = {{"job_id", eager.first}, {"attempt", eager.second}, {"speedup", nullptr}};
      if (speedup) entry["eager"]["speedup"] = *speedup;
    }
    results.push_back(std::move(entry));
  }
  std::vector<std::string> arguments{"--tracking-uri", target.tracking_uri};
  if (!target.experiment.empty()) arguments.insert(arguments.end(), {"--experiment", target.experiment});
  if (!target.artifacts.empty()) arguments.insert(arguments.end(), {"--artifacts", target.artifacts});
  run_writer("torchsweep-mlflow", {{"columns", handed_columns}, {"results", results}},
             std::filesystem::temp_directory_path(), arguments, "--to");
}

}  // namespace ts::cli
