#pragma once
// A result checked and laid out for the store before the store's one writer
// sees it: validated against schemas/result.schema.json, its row's values
// taken from its judged summary by the column table
// (schemas/result_columns.json), its document and epoch rows as text. The
// work that needs no connection to the store, so that it can be done on any
// thread (the coordinator's pool) and the writer only binds and steps.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ts::store {

// One column's value; monostate for a column the store fills itself (the
// agent, the time received) and for null.
using ColumnValue = std::variant<std::monostate, int64_t, double, std::string>;

struct PreparedEpoch {
  int64_t epoch = 0;
  double seconds = 0;
  std::string step_seconds;  // a JSON array
};

struct PreparedTrace {
  std::string sha256;
  int64_t bytes = 0;
};

struct PreparedResult {
  std::string job_id;
  int64_t attempt = 1;
  std::vector<ColumnValue> values;     // per column of result_columns(), in its order
  std::string document;                // the whole result, as JSON text
  std::optional<PreparedTrace> trace;  // a profile's trace the coordinator kept (profile.trace.stored)
  std::vector<PreparedEpoch> epochs;
};

// Throws ts::InvalidInput naming the field of an invalid document, or a
// summary that does not give every column (or gives one the table lacks).
// Thread-safe.
PreparedResult prepare_result(const nlohmann::json& result);

}  // namespace ts::store
