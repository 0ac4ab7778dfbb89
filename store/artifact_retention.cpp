#include "store/artifact_retention.hpp"

#include <set>
#include <string>
#include <vector>

namespace ts::store {
namespace {

struct Row {
  std::string job_id, kind, sha256;
  std::int64_t attempt = 0;
  std::uintmax_t bytes = 0;
  bool old = false;
};

// Every row, newest result first, each marked when its result is older than the cutoff.
std::vector<Row> rows_newest_first(Database& database, const RetentionOptions& options) {
  auto select = database.prepare(
      "SELECT a.job_id, a.attempt, a.kind, a.sha256, a.bytes, "
      "       ?1 IS NOT NULL AND r.received_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?1 || ' seconds') "
      "FROM artifacts a JOIN results r ON r.job_id = a.job_id AND r.attempt = a.attempt "
      "ORDER BY r.received_at DESC, a.job_id, a.attempt, a.kind");
  if (options.older_than_days) {
    select.bind(1, *options.older_than_days * 86400.0);
  } else {
    select.bind(1, nullptr);
  }
  std::vector<Row> rows;
  while (select.step()) {
    rows.push_back({select.text(0), select.text(2), select.text(3), select.integer(1),
                    static_cast<std::uintmax_t>(select.integer(4)), select.integer(5) != 0});
  }
  return rows;
}

}  // namespace

RetentionOutcome collect_garbage(Database& database, const ArtifactFiles& files, const RetentionOptions& options) {
  RetentionOutcome outcome;
  std::set<std::string> kept, dropped;
  std::uintmax_t total = 0;
  std::vector<const Row*> drop;
  const auto rows = rows_newest_first(database, options);
  bool full = false;  // once a file does not fit, no older result's does
  for (const auto& row : rows) {
    const bool counted = kept.contains(row.sha256);  // shared contents cost once
    full = full || (options.max_total_bytes && !counted && total + row.bytes > *options.max_total_bytes);
    if (row.old || (full && !counted)) {
      drop.push_back(&row);
      dropped.insert(row.sha256);
      continue;
    }
    if (!counted) total += row.bytes;
    kept.insert(row.sha256);
  }
  outcome.rows_dropped = static_cast<std::int64_t>(drop.size());
  if (!options.dry_run && !drop.empty()) {
    Transaction transaction(database);
    auto remove = database.prepare("DELETE FROM artifacts WHERE job_id = ? AND attempt = ? AND kind = ?");
    for (const auto* row : drop) remove.bind_all(row->job_id, row->attempt, row->kind).run();
    transaction.commit();
  }
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& [sha256, written] : files.files()) {
    std::error_code error;
    const auto bytes = std::filesystem::file_size(files.path_of(sha256), error);
    const bool orphan = !dropped.contains(sha256) && !kept.contains(sha256) && now - written > options.orphan_grace;
    if (kept.contains(sha256) || !(dropped.contains(sha256) || orphan)) {
      ++outcome.files_kept;
      outcome.bytes_kept += error ? 0 : bytes;
      continue;
    }
    ++outcome.files_removed;
    outcome.bytes_freed += options.dry_run ? (error ? 0 : bytes) : files.remove(sha256);
  }
  return outcome;
}

}  // namespace ts::store
