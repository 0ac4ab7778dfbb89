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

struct Group {
  std::vector<nlohmann::json> key;      // the grouping axes' values
  std::array<int64_t, 2> flagged{};     // runs flagged noisy or warmup_insufficient, per side
  std::array<int64_t, 2> inaccurate{};  // runs whose compiled step failed the accuracy gate, per side
  std::array<int64_t, 2> busy{};        // runs taken while the node was busy (context.condition), per side
  // Runs their sweep paired (pairing.by) whose partner of the same round ran
  // on the same host, per side; counted where Collection::count_paired.
  std::array<int64_t, 2> paired{};
  std::array<std::set<std::string>, 2> fields;  // per side: where the figures of the field metric came from
  // samples[side][metric]: per-run values, in the asked metrics' order
  std::array<std::vector<std::vector<double>>, 2> samples;
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
// The groups in the order of their keys.
void sort_by_key(Grouping& grouping);
// The values of `axis` present in the results `condition` lets through, sorted.
std::vector<std::string> values_of(Database& database, const Condition& condition, const Axis& axis);

}  // namespace ts::readers
