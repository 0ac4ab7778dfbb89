#include <iostream>

#include "cli/commands.hpp"
#include "cli/key_value.hpp"
#include "cli/terminal_width.hpp"
#include "readers/query.hpp"
#include "shared/errors.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

struct FilterSettings {
  std::string db = "torchsweep.db";
  std::vector<std::string> sweeps, tags, where;
  std::string since, until, format = "table";
  bool include_failed = false;

  readers::ResultFilter filter() const {
    readers::ResultFilter filter{sweeps, tags, since, until, {}, include_failed};
    for (const auto& condition : where) filter.where.push_back(split_key_value(condition, "--where"));
    return filter;
  }
};

void add_filter_options(CLI::App* command, FilterSettings& settings, const std::string& default_format) {
  settings.format = default_format;
  command->add_option("--db", settings.db, "the SQLite store")->capture_default_str();
  command->add_option("--sweep", settings.sweeps, "only this sweep: id, or name for its newest run (repeatable)");
  command->add_option("--tag", settings.tags, "only sweeps with this tag (repeatable)");
  command->add_option("--since", settings.since,
                      "only results received at or after this instant: 2026-11-30, 2026-11-30T18:00Z, "
                      "2026-11-30T18:00:30+01:00 (UTC unless a zone is given)");
  command->add_option("--until", settings.until, "only results received before this instant (forms as --since)");
  command->add_option("--where", settings.where, "AXIS=VALUE: only results where the axis has the value (repeatable)");
  command->add_flag("--include-failed", settings.include_failed, "also results whose status is not ok");
  command->add_option("--format", settings.format, "table | csv | json")->capture_default_str();
}

}  // namespace

Command add_query_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "query", "per-configuration medians from the store, with speedups (--compare) or regressions (--baseline)");
  struct Settings : FilterSettings {
    std::vector<std::string> group_by, metrics;
    std::string compare, baseline, memory_metric = readers::QueryOptions{}.memory_metric;
    double alpha = readers::QueryOptions{}.regression_alpha, threshold = readers::QueryOptions{}.regression_threshold;
    bool adaptive = false;
  };
  auto settings = std::make_shared<Settings>();
  add_filter_options(command, *settings, "table");
  command->add_option("--group-by", settings->group_by, "axes to group by (repeatable or comma-separated)")
      ->delimiter(',');
  std::string metric_names;
  for (const auto& name : readers::query_metrics()) metric_names += (metric_names.empty() ? "" : ", ") + name;
  command->add_option("--metric", settings->metrics, metric_names + " (repeatable)")->delimiter(',');
  command->add_option(
      "--compare", settings->compare,
      "AXIS, AXIS=REF,OTHER or AXIS=REF,* (each other value against REF): side by side with speedup and "
      "memory reduction");
  command
      ->add_option("--memory-metric", settings->memory_metric,
                   "the memory figure of --compare's memory_reduction: peak_memory, warmup_memory or reserved_memory")
      ->capture_default_str();
  command->add_flag("--adaptive", settings->adaptive,
                    "instead of results: each compared pair of the adaptive sweeps, its rounds and why it stopped");
  command->add_option("--baseline", settings->baseline,
                      "sweep id, name or tag to test every group against for regressions");
  command->add_option("--alpha", settings->alpha, "significance level of the regression test")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  command
      ->add_option("--threshold", settings->threshold,
                   "smallest relative change of the median that counts as a regression")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  return [settings] {
    const auto format = readers::parse_format(settings->format, "--format");
    auto database = store::open_read_only(settings->db);
    if (settings->adaptive) {
      std::cout << readers::render(readers::adaptive_stops(database, settings->filter()), format, terminal_width());
      return 0;
    }
    readers::QueryOptions options;
    options.filter = settings->filter();
    options.group_by = settings->group_by;
    options.metrics = settings->metrics;
    options.compare = settings->compare;
    options.baseline = settings->baseline;
    options.memory_metric = settings->memory_metric;
    options.regression_alpha = settings->alpha;
    options.regression_threshold = settings->threshold;
    std::cout << readers::render(readers::query(database, options), format, terminal_width());
    return 0;
  };
}

Command add_export_command(CLI::App& app) {
  auto* command = app.add_subcommand("export", "every stored result as flat rows (CSV or JSON)");
  auto settings = std::make_shared<FilterSettings>();
  add_filter_options(command, *settings, "csv");
  return [settings] {
    const auto format = readers::parse_format(settings->format, "--format");
    auto database = store::open_read_only(settings->db);
    std::cout << readers::render(readers::export_results(database, settings->filter()), format, terminal_width());
    return 0;
  };
}

}  // namespace ts::cli
