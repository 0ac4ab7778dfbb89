#pragma once
// `torchsweep gc` (docs/explain.md, "Traces"): which stored traces to keep.
// Rows of the artifacts table go first, in one transaction, then the files
// no row names any more; the results and their profile summaries stay.
#include <chrono>
#include <cstdint>
#include <optional>

#include "store/artifacts.hpp"
#include "store/sqlite.hpp"

namespace ts::store {

struct RetentionOptions {
  std::optional<double> older_than_days;          // drop the files of results received longer ago
  std::optional<std::uintmax_t> max_total_bytes;  // then keep the newest results' files within this total
  // A file no row names is removed only once this old: the coordinator writes a
  // file just before the row that names it.
  std::chrono::seconds orphan_grace{600};
  bool dry_run = false;  // count, change nothing
};

struct RetentionOutcome {
  std::int64_t rows_dropped = 0, files_removed = 0, files_kept = 0;
  std::uintmax_t bytes_freed = 0, bytes_kept = 0;
};

RetentionOutcome collect_garbage(Database& database, const ArtifactFiles& files, const RetentionOptions& options);

}  // namespace ts::store
