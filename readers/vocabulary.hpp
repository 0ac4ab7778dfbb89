#pragma once
// The query vocabulary (docs/query.md): the axes and metrics a query, an
// export or a report may name, each with the fixed SQL it becomes, and a
// result filter as a WHERE clause. User input only ever reaches SQL as
// bound parameters or as a name checked against these lists.
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::readers {

using store::Database;
using store::Statement;

struct Axis {
  std::string name, sql;
  // NULL for every result but a language model's: among the default axes
  // only where a result has a value (the sequence axes).
  bool sparse = false;
  // The axes whose value decides this one's (the environments a runner
  // runs in, the compiler a mode runs): compared on one of those, this
  // axis is a value of each side, not a key both sides must share.
  std::vector<std::string> follows{};
};

struct Metric {
  std::string name, column, sql;
  double scale = 1;
  bool higher_is_better = false;
  std::string field_sql = "NULL";  // memory: the result field the figure came from, named by --compare
};

// Every axis and metric, in the order docs/query.md lists them.
// The axes a configuration is named by, in their order: query's default
// grouping and the report's.
const std::vector<std::string>& configuration_axes();

const std::vector<Axis>& axis_table();
const std::vector<Metric>& metric_table();
// Their names.
const std::vector<std::string>& query_axes();
const std::vector<std::string>& query_metrics();
// The axis or metric called `name`; else ts::InvalidInput naming `option`
// and every known name.
const Axis& axis_named(const std::string& name, const std::string& option);
// The axes called `names`, as axis_named finds them for --group-by.
std::vector<const Axis*> axes_named(const std::vector<std::string>& names);
const Metric& metric_named(const std::string& name, const std::string& option = "--metric");

struct ResultFilter {
  std::vector<std::string> sweeps;                         // ids, or names (the newest sweep of that name)
  std::vector<std::string> tags;                           // results of every sweep carrying one of them
  std::string since;                                       // ISO 8601 date or time: results received at or after it
  std::string until;                                       // ISO 8601 date or time: results received before it
  std::vector<std::pair<std::string, std::string>> where;  // axis = value, all must hold
  bool include_failed = false;                             // also results whose status is not ok
  // Which runs: those the sweep planned ("measurement", the default), the
  // reruns of `torchsweep confirm` ("confirmation"), or "any".
  std::string purpose = "measurement";
};

// A WHERE clause of fixed fragments and the values bound to its '?'s.
struct Condition {
  std::string sql = "1";
  std::vector<std::string> values;
  void add(const std::string& fragment, std::vector<std::string> bound = {}) {
    sql += " AND " + fragment;
    values.insert(values.end(), bound.begin(), bound.end());
  }
};

// The results `filter` lets through (alias r of the results table).
Condition condition_of(Database& database, const ResultFilter& filter);
// Binds the condition's values to its '?'s, the first of them at `first`.
void bind_condition(Statement& statement, const Condition& condition, int first = 1);
// A sweep id, or the newest sweep of that name; results stored without a
// sweep row (imported documents) are matched by the name they carry.
std::string resolve_sweep(Database& database, const std::string& id_or_name, const std::string& option);

}  // namespace ts::readers
