#pragma once
// The tables `torchsweep query` chooses among (internal to readers/;
// docs/query.md): each group's medians, judged against a baseline where one
// is named (summary_table.cpp), and two values of one axis side by side
// (compared_table.cpp). query.cpp only chooses which.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "readers/query.hpp"

namespace ts::readers {

// The metrics asked for, then those the statistics need but the table does
// not show (the epoch time of a speedup, say).
struct MetricList {
  std::vector<const Metric*> metrics;
  std::size_t shown = 0;

  explicit MetricList(const std::vector<std::string>& names) : shown(names.size()) {
    for (const auto& name : names) metrics.push_back(&metric_named(name));
  }
  std::size_t index_of(const Metric& metric) {
    const auto found = std::find(metrics.begin(), metrics.end(), &metric);
    if (found != metrics.end()) return static_cast<std::size_t>(found - metrics.begin());
    metrics.push_back(&metric);
    return metrics.size() - 1;
  }
};

// --compare: the axis and its two values, reference first.
struct Comparison {
  const Axis* axis = nullptr;
  std::array<std::string, 2> values;
};

// --compare's AXIS, or AXIS=REFERENCE,OTHER: the axis and its two values,
// the default ones for AXIS alone (eager and compiled, synthetic and the one
// dataset, the only two values present).
Comparison comparison_of(Database& database, const Condition& condition, const std::string& spec);
// Two values of one axis side by side: runs and medians of each, the
// speedup and the memory reduction.
Table compared_table(Database& database, const Condition& condition, const QueryOptions& options,
                     const Comparison& comparison, const std::vector<std::string>& group_names, MetricList metrics);
// "--compare AXIS=REFERENCE,*": each other value against the reference,
// stacked; nullopt for any other --compare.
std::optional<Table> compare_each_against(Database& database, const QueryOptions& options);

// Each group's runs and medians; against a baseline sweep, each median's
// change and the regression rule's verdict on the first metric; over a
// gpus axis with several rank counts, the scaling efficiency.
Table summary_table(Database& database, const Condition& condition, const QueryOptions& options,
                    const std::vector<std::string>& group_names, MetricList metrics);
// A sweep id; else the newest sweep with that name or tag that is not
// among the results being judged (so "nightly" means the previous night).
std::string baseline_sweep(Database& database, const std::string& baseline, const Condition& current);

}  // namespace ts::readers
