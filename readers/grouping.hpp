#pragma once
// Results gathered into groups by the values of some axes (internal to
// readers/): each group holds every run's value of the asked metrics, on
// one of two sides (a comparison's reference and other value, or the
// judged results and their baseline), for readers/comparisons.hpp to weigh.
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "readers/vocabulary.hpp"

namespace ts::readers {

// One side's runs of a group.
struct Side {
  int64_t flagged = 0;     // runs flagged noisy or warmup_insufficient
  int64_t inaccurate = 0;  // runs whose compiled step failed the accuracy gate
  int64_t busy = 0;        // runs taken while the node was busy (context.condition)
  int64_t peak_below = 0;  // runs whose FLOP rate exceeded the peak their MFU used
  // Runs their sweep paired (pairing.by) whose partner of the same round ran
  // on the same host; counted where Collection::count_paired.
  int64_t paired = 0;
  std::set<std::string> fields;  // where the figures of the field metric came from
  // samples[metric]: per-run values, in the asked metrics' order
  std::vector<std::vector<double>> samples;
};

struct Group {
  std::vector<nlohmann::json> key;  // the grouping axes' values
  std::array<Side, 2> sides;
};

struct Grouping {
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> index;  // by the key's text
};

// What collect() reads: the grouping axes, the metrics, and which side a
// row counts on.
struct Collection {
  std::vector<const Axis*> keys;
  std::vector<const Metric*> metrics;
  // The compared axis and the side of each of its values (-1: skip the
  // row); without one every row counts on `fixed_side`.
  const Axis* side_axis = nullptr;
  std::function<int(const nlohmann::json&)> side_of;
  int fixed_side = 0;
  // The memory metric whose source fields each group records.
  const Metric* field_metric = nullptr;
  // Whether to count each group's paired runs (Group::paired).
  bool count_paired = false;
};

// Adds every result `condition` lets through to its group.
void collect(Database& database, const Condition& condition, const Collection& collection, Grouping& grouping);
// Where the last `side_axes` of the grouping axes belong to each side (the
// environment of each of two compared runners): one group for each pairing
// of a group with reference runs and a group with other runs whose leading
// keys agree (a side no group has pairs as empty), keyed by the leading
// key, then each side axis's reference and other value.
Grouping paired_across(const Grouping& grouping, std::size_t side_axes);
// The groups in the order of their keys.
void sort_by_key(Grouping& grouping);
// The values of `axis` present in the results `condition` lets through, sorted.
std::vector<std::string> values_of(Database& database, const Condition& condition, const Axis& axis);

}  // namespace ts::readers
