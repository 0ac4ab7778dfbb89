#pragma once
// `torchsweep query` and `export` over the store (docs/query.md): results
// filtered by sweep, tag, time and axis values, grouped by any axes, with
// per-group medians; optionally two values of one axis side by side (e.g.
// eager vs compiled: speedup and memory reduction with bootstrap confidence
// intervals) or a comparison with a baseline sweep that flags regressions
// beyond noise. User input only ever reaches SQL as bound parameters or as
// a name checked against the fixed lists below.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::readers {

using store::Database;

// Axes a query can filter and group by (docs/query.md lists them).
const std::vector<std::string>& query_axes();
// Metrics a query can report.
const std::vector<std::string>& query_metrics();

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

struct QueryOptions {
  ResultFilter filter;
  std::vector<std::string> group_by;  // empty: the default configuration axes
  std::vector<std::string> metrics;   // empty: epoch_time, samples_per_s, peak_memory
  // "--compare mode", "--compare precision=fp32,bf16", or "--compare
  // runner=libtorch,*" (every other runner against libtorch): the axis taken out
  // of the grouping and the two values put side by side (reference first).
  std::string compare;
  // The memory figure of --compare's memory_reduction (docs/query.md).
  std::string memory_metric = "peak_memory";
  // A sweep (id or name) or a tag (its newest sweep outside the filtered
  // results): each group is tested against the same group there.
  std::string baseline;
  double regression_alpha = 0.01;      // Mann-Whitney two-sided p below this...
  double regression_threshold = 0.05;  // ...and a change of the median worse than this fraction
  std::uint64_t seed = 0;              // of the bootstrap intervals
};

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // numbers, strings or null
};

// Throws ts::InvalidInput naming the option of a bad axis, metric, filter or
// comparison.
Table query(Database& database, const QueryOptions& options);
// Each compared pair of the adaptive sweeps among `filter`'s (every sweep
// when it names none): its rounds, the relative half-width of its speedup
// interval, and why it stopped (docs/sweeps.md).
Table adaptive_stops(Database& database, const ResultFilter& filter);
// Every stored result that passes `filter`, one flat row each.
Table export_results(Database& database, const ResultFilter& filter);
// The sweep `baseline` names (docs/query.md) for the results of `current`.
std::string resolve_baseline(Database& database, const std::string& baseline, const ResultFilter& current);
// The configuration keys (jobs.config_key) of the results that pass `filter`.
std::vector<std::string> configurations_of(Database& database, const ResultFilter& filter);

// The column index of `name` in `table`; throws std::out_of_range.
std::size_t column_of(const Table& table, const std::string& name);
// The rows as JSON objects keyed by column (what --format json prints).
nlohmann::json row_objects(const Table& table);

enum class Format { table, csv, json };
Format parse_format(const std::string& text, const std::string& field);
// `width` (table format only; 0: no limit) is the terminal's: a table wider
// than it is printed in blocks of columns, each repeating the leading text
// columns that name the row, so no line wraps.
std::string render(const Table& table, Format format, std::size_t width = 0);

}  // namespace ts::readers
