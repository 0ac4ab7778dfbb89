#include "store/prepared_result.hpp"

#include <algorithm>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/schema.hpp"
#include "store/result_columns.hpp"

namespace ts::store {
namespace {

// One summary value, checked against its column's type and nullability.
ColumnValue value_of(const Column& column, const nlohmann::json& value) {
  const auto field = "summary." + column.name;
  if (value.is_null()) {
    if (!column.nullable) throw InvalidInput(field, "a value: the column cannot be empty");
    return {};
  }
  if (column.type == "int64" && value.is_number_integer()) return value.get<int64_t>();
  if (column.type == "float64" && value.is_number()) return value.get<double>();
  if (column.type == "bool" && value.is_boolean()) return int64_t{value.get<bool>() ? 1 : 0};
  if ((column.type == "string" || column.type == "timestamp") && value.is_string()) return value.get<std::string>();
  throw InvalidInput(field, column.type + " or null (schemas/result_columns.json), not " + value.dump());
}

}  // namespace

PreparedResult prepare_result(const nlohmann::json& result) {
  static const schema::Validator validator("result.schema.json");
  validator.validate(result);
  const auto& job = result.at("job");
  if (!job.contains("job_id")) throw InvalidInput("job.job_id", "a stored result needs the id of its job");
  if (!result.contains("summary")) {
    throw InvalidInput("summary",
                       "the judge's summary (agent/judge/summary.hpp): a runner's raw document is stored once an "
                       "agent or `torchsweep judge` has judged it");
  }
  PreparedResult prepared;
  prepared.job_id = job.at("job_id").get<std::string>();
  prepared.attempt = job_fields::get<int64_t>(job, "attempt");
  const auto& summary = result.at("summary");
  const auto& columns = result_columns().columns;
  prepared.values.reserve(columns.size());
  std::size_t from_summary = 0;
  for (const auto& column : columns) {
    if (column.filled_by_store) {
      prepared.values.emplace_back();
    } else if (const auto value = summary.find(column.name); value != summary.end()) {
      prepared.values.push_back(value_of(column, *value));
      ++from_summary;
    } else {
      throw InvalidInput("summary." + column.name, "its value or null (the judge gives every column)");
    }
  }
  if (summary.size() != from_summary) {  // a key beside the columns: named, found only on this error's path
    for (const auto& [name, value] : summary.items()) {
      const auto known = std::find_if(columns.begin(), columns.end(), [&](const Column& c) { return c.name == name; });
      if (known == columns.end() || known->filled_by_store) {
        throw InvalidInput("summary." + name, "a column of the store's results table (schemas/result_columns.json)");
      }
    }
  }
  if (summary.at("job_id") != prepared.job_id || summary.at("attempt") != prepared.attempt) {
    throw InvalidInput("summary.job_id", "the job's id and attempt, " + prepared.job_id + " attempt " +
                                             std::to_string(prepared.attempt) + ": a summary of another result");
  }
  prepared.document = result.dump();
  // The coordinator marks a trace stored once its file is among the artifacts (docs/explain.md).
  if (const auto trace = result.value(nlohmann::json::json_pointer("/profile/trace"), nlohmann::json());
      trace.is_object() && trace.value("stored", false)) {
    prepared.trace = PreparedTrace{trace.at("sha256").get<std::string>(), trace.at("bytes").get<int64_t>()};
  }
  if (result.contains("timing")) {
    const auto& timing = result.at("timing");
    const auto& epochs = timing.at("epoch_seconds");
    const auto& steps = timing.at("step_seconds");
    for (std::size_t e = 0; e < epochs.size(); ++e) {
      prepared.epochs.push_back(
          {static_cast<int64_t>(e), epochs[e].get<double>(), e < steps.size() ? steps[e].dump() : std::string("[]")});
    }
  }
  return prepared;
}

}  // namespace ts::store
