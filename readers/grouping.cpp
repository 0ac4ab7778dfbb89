#include "readers/grouping.hpp"

#include <algorithm>

#include "readers/sql_parts.hpp"

namespace ts::readers {
namespace {

// Whether a result's sweep paired it (docs/noise.md) and its partner, the
// job of the same round whose configuration differs only in pairing.by, has
// a successful result from the same host.
constexpr const char* paired_sql =
    "EXISTS (SELECT 1 FROM jobs j JOIN sweeps s ON s.sweep_id = j.sweep_id "
    "JOIN jobs j2 ON j2.sweep_id = j.sweep_id AND j2.repeat = j.repeat AND j2.job_id <> j.job_id "
    "JOIN results r2 ON r2.job_id = j2.job_id AND r2.host = r.host AND r2.status = 'ok' "
    "WHERE j.job_id = r.job_id AND json_extract(s.spec, '$.pairing.by') IS NOT NULL "
    "AND json_remove(j2.config_key, '$.' || json_extract(s.spec, '$.pairing.by')) = "
    "json_remove(j.config_key, '$.' || json_extract(s.spec, '$.pairing.by')))";

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
      for (auto& side_samples : group.samples) side_samples.resize(metrics.size());
      grouping.groups.push_back(std::move(group));
    }
    auto& group = grouping.groups[found->second];
    const auto at = static_cast<std::size_t>(side);
    group.flagged[at] += select.integer(key_count + 1);
    group.inaccurate[at] += select.integer(key_count + 2);
    group.busy[at] += select.integer(key_count + 3);
    group.paired[at] += select.integer(key_count + 4);
    if (!select.is_null(key_count + 5)) group.fields[at].insert(select.text(key_count + 5));
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const int column = key_count + 6 + static_cast<int>(m);
      if (!select.is_null(column)) group.samples[at][m].push_back(select.real(column) * metrics[m]->scale);
    }
  }
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
