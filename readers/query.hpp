#pragma once
// `torchsweep query` and `export` over the store (docs/query.md): results
// filtered by sweep, tag, time and axis values, grouped by any axes, with
// per-group medians; optionally two values of one axis side by side (e.g.
// eager vs compiled: speedup and memory reduction with bootstrap confidence
// intervals) or a comparison with a baseline sweep that flags regressions
// beyond noise, in the vocabulary of readers/vocabulary.hpp, with the
// statistics of readers/comparisons.hpp. The answers are readers::Table
// values; the CLI renders them.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "readers/comparisons.hpp"
#include "readers/table.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

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
  RegressionRule regression;  // the verdict on --baseline's first metric
  std::uint64_t seed = 0;     // of the bootstrap intervals
};

// Throws ts::InvalidInput naming the option of a bad axis, metric, filter or
// comparison.
Table query(Database& database, const QueryOptions& options);
// A suite's summary of a comparison (options.compare), as PyTorch's compiler
// dashboard gives it: per value of `summary_by` (none: one row), the
// configurations that ran (failed results included), how many passed (a
// speedup on both sides' successful results) and the geometric mean of
// their speedups. Throws ts::InvalidInput without --compare.
Table suite_summary(Database& database, const QueryOptions& options, const std::vector<std::string>& summary_by);
// Each compared pair of the adaptive sweeps among `filter`'s (every sweep
// when it names none): its rounds, the relative half-width of its speedup
// interval, and why it stopped (docs/sweeps.md).
Table adaptive_stops(Database& database, const ResultFilter& filter);
// The sweep `baseline` names (docs/query.md) for the results of `current`.
std::string resolve_baseline(Database& database, const std::string& baseline, const ResultFilter& current);
// The configuration keys (jobs.config_key) of the results that pass `filter`.
std::vector<std::string> configurations_of(Database& database, const ResultFilter& filter);

}  // namespace ts::readers
