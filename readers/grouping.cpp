#include "readers/grouping.hpp"

#include <algorithm>
#include <map>

#include "readers/sql_parts.hpp"

namespace ts::readers {
namespace {

// Whether a result's sweep paired it (docs/noise.md) and its partner, the
// job of the same round and pair (jobs.pair_key, which the coordinator
// stores), has a successful result from the same host.
constexpr const char* paired_sql =
    "EXISTS (SELECT 1 FROM jobs j "
    "JOIN jobs j2 ON j2.sweep_id = j.sweep_id AND j2.repeat = j.repeat AND j2.job_id <> j.job_id "
    "AND j2.pair_key = j.pair_key "
    "JOIN results r2 ON r2.job_id = j2.job_id AND r2.host = r.host AND r2.status = 'ok' "
    "WHERE j.job_id = r.job_id)";

}  // namespace

void collect(Database& database, const Condition& condition, const Collection& collection, Grouping& grouping) {
  const auto& keys = collection.keys;
  const auto& metrics = collection.metrics;
  std::string sql = "SELECT ";
  for (const auto* axis : keys) sql += axis->sql + ", ";
  sql += collection.side_axis ? collection.side_axis->sql : "NULL";
  sql += ", COALESCE(r.noisy, 0) + COALESCE(r.warmup_insufficient, 0) > 0";
  sql += ", COALESCE(r.accuracy = 'fail', 0)";
  sql += ", COALESCE(r.machine_busy, 0)";
  sql += ", COALESCE(r.peak_below_achieved, 0)";
  sql += collection.count_paired ? std::string(", ") + paired_sql : std::string(", 0");
  sql += ", " + (collection.field_metric ? collection.field_metric->field_sql : std::string("NULL"));
  for (const auto* metric : metrics) sql += ", " + metric->sql;
  sql += " FROM results r WHERE " + condition.sql;
  auto select = database.prepare(sql);
  bind_condition(select, condition);
  const int key_count = static_cast<int>(keys.size());
  std::string key_text;
  while (select.step()) {
    const int side = collection.side_axis ? collection.side_of(cell(select, key_count)) : collection.fixed_side;
    if (side < 0) continue;
    key_text.clear();
    for (int k = 0; k < key_count; ++k) {
      if (select.is_null(k)) {
        key_text += '\x01';
      } else {
        key_text += select.text_view(k);
      }
      key_text += '\x1f';
    }
    auto [found, inserted] = grouping.index.try_emplace(key_text, grouping.groups.size());
    if (inserted) {
      Group group;
      for (int k = 0; k < key_count; ++k) group.key.push_back(cell(select, k));
      for (auto& half : group.sides) half.samples.resize(metrics.size());
      grouping.groups.push_back(std::move(group));
    }
    auto& counted = grouping.groups[found->second].sides[static_cast<std::size_t>(side)];
    counted.flagged += select.integer(key_count + 1);
    counted.inaccurate += select.integer(key_count + 2);
    counted.busy += select.integer(key_count + 3);
    counted.peak_below += select.integer(key_count + 4);
    counted.paired += select.integer(key_count + 5);
    if (!select.is_null(key_count + 6)) counted.fields.insert(select.text(key_count + 6));
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const int column = key_count + 7 + static_cast<int>(m);
      if (!select.is_null(column)) counted.samples[m].push_back(select.real(column) * metrics[m]->scale);
    }
  }
}

Grouping paired_across(const Grouping& grouping, std::size_t side_axes) {
  struct Sides {
    std::vector<nlohmann::json> leading;
    std::array<std::vector<const Group*>, 2> groups;  // those with runs on side 0, on side 1
  };
  const auto has_runs = [](const Side& side) {
    return std::any_of(side.samples.begin(), side.samples.end(), [](const auto& values) { return !values.empty(); });
  };
  std::map<std::string, Sides> by_leading;
  for (const auto& group : grouping.groups) {
    const auto split = group.key.end() - static_cast<std::ptrdiff_t>(side_axes);
    std::vector<nlohmann::json> leading(group.key.begin(), split);
    auto& sides = by_leading[nlohmann::json(leading).dump()];
    sides.leading = std::move(leading);
    for (std::size_t side = 0; side < 2; ++side) {
      if (has_runs(group.sides[side])) sides.groups[side].push_back(&group);
    }
  }
  Grouping paired;
  for (auto& [text, sides] : by_leading) {
    for (auto& side_groups : sides.groups) {
      if (side_groups.empty()) side_groups.push_back(nullptr);  // the side pairs as empty
    }
    for (const Group* reference : sides.groups[0]) {
      for (const Group* other : sides.groups[1]) {
        if (!reference && !other) continue;
        const std::array<const Group*, 2> from{reference, other};
        Group group;
        group.key = sides.leading;
        for (std::size_t a = 0; a < side_axes; ++a) {
          for (const Group* side : from) {
            group.key.push_back(side ? side->key[side->key.size() - side_axes + a] : nlohmann::json(nullptr));
          }
        }
        const auto metrics = (reference ? reference : other)->sides[0].samples.size();
        for (std::size_t side = 0; side < 2; ++side) {
          if (from[side]) {
            group.sides[side] = from[side]->sides[side];
          } else {
            group.sides[side].samples.resize(metrics);
          }
        }
        paired.groups.push_back(std::move(group));
      }
    }
  }
  return paired;
}

void sort_by_key(Grouping& grouping) {
  std::sort(grouping.groups.begin(), grouping.groups.end(),
            [](const Group& a, const Group& b) { return a.key < b.key; });
  grouping.index.clear();  // positions changed; nothing is collected after sorting
}

std::vector<std::string> values_of(Database& database, const Condition& condition, const Axis& axis) {
  auto select =
      database.prepare("SELECT DISTINCT " + axis.sql + " FROM results r WHERE " + condition.sql + " ORDER BY 1");
  bind_condition(select, condition);
  std::vector<std::string> values;
  while (select.step()) values.push_back(select.is_null(0) ? "" : select.text(0));
  return values;
}

}  // namespace ts::readers
