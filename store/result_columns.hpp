#pragma once
// The one column table of stored results (schemas/result_columns.json): the
// results table's columns, each filled by name from the judged result's
// summary (agent/judge/summary.hpp) or by the store itself, with the types
// the exports give them; and the steps view the exports read beside it.
#include <map>
#include <string>
#include <vector>

namespace ts::store {

struct Column {
  std::string name;
  std::string type;    // string, int64, float64, bool or timestamp
  std::string mlflow;  // results: what the MLflow export makes of it (param, metric or tag)
  bool nullable = true;
  bool filled_by_store = false;  // who delivered the result and when: not the summary's
};

struct ColumnTable {
  std::string source;              // the store's table or view
  std::vector<std::string> order;  // its columns exported rows are sorted by
  std::vector<Column> columns;
};

// The file's tables by name ("results", "steps").
const std::map<std::string, ColumnTable>& column_tables();
// The results table's.
const ColumnTable& result_columns();

}  // namespace ts::store
