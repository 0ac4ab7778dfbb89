// torchsweep gc: retention of the files kept beside the store (docs/explain.md,
// "Traces"): the traces of results older than --older-than, then the oldest
// beyond --max-total-mib, and any file no result names; results and their
// profile summaries stay.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "shared/errors.hpp"
#include "store/artifact_retention.hpp"
#include "store/store.hpp"

namespace ts::cli {

Command add_gc_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "gc", "remove stored traces by age and total size, and files beside the store that no result names");
  struct Settings {
    std::string db = "torchsweep.db";
    std::optional<double> older_than_days, max_total_mib;
    bool dry_run = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--db", settings->db, "the store")->capture_default_str();
  command->add_option("--older-than", settings->older_than_days,
                      "DAYS: remove the traces of results received longer ago");
  command->add_option("--max-total-mib", settings->max_total_mib,
                      "MiB: then keep the newest results' traces within this total");
  command->add_flag("--dry-run", settings->dry_run, "say what would be removed, remove nothing");
  return [settings] {
    if (settings->older_than_days && *settings->older_than_days < 0) {
      throw InvalidInput("--older-than", "expected days, 0 or more");
    }
    if (settings->max_total_mib && *settings->max_total_mib < 0) {
      throw InvalidInput("--max-total-mib", "expected MiB, 0 or more");
    }
    if (!std::filesystem::is_regular_file(settings->db)) {
      throw InvalidInput("--db", "no store at '" + settings->db + "'");
    }
    store::Store store(settings->db);
    const auto files = store::ArtifactFiles::beside(store.path());
    store::RetentionOptions options;
    options.older_than_days = settings->older_than_days;
    if (settings->max_total_mib) {
      options.max_total_bytes = static_cast<std::uintmax_t>(*settings->max_total_mib * 1024 * 1024);
    }
    options.dry_run = settings->dry_run;
    const auto outcome = store::collect_garbage(store.database(), *files, options);
    constexpr double mib = 1024.0 * 1024.0;
    std::cout << fmt::format(
        "{}{} trace{} of results dropped; {} file{} removed ({:.1f} MiB), {} kept ({:.1f} MiB) in {}\n",
        settings->dry_run ? "dry run, nothing changed: " : "", outcome.rows_dropped,
        outcome.rows_dropped == 1 ? "" : "s", outcome.files_removed, outcome.files_removed == 1 ? "" : "s",
        outcome.bytes_freed / mib, outcome.files_kept, outcome.bytes_kept / mib, files->directory().string());
    return exit_code::ok;
  };
}

}  // namespace ts::cli
