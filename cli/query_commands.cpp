#include <iostream>

#include "cli/commands.hpp"
#include "cli/filter_options.hpp"
#include "cli/mlflow_export.hpp"
#include "cli/parquet_export.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "readers/export.hpp"
#include "readers/noise.hpp"
#include "readers/query.hpp"
#include "readers/regression_records.hpp"
#include "shared/errors.hpp"
#include "store/migrations.hpp"

namespace ts::cli {

Command add_query_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "query", "per-configuration medians from the store, with speedups (--compare) or regressions (--baseline)");
  struct Settings : FilterSettings {
    std::vector<std::string> group_by, metrics;
    std::string compare, baseline, memory_metric = readers::QueryOptions{}.memory_metric;
    readers::RegressionRule rule;
    bool adaptive = false, summary = false, noise = false, calibrations = false, regressions = false;
    std::size_t night_runs = readers::NoiseOptions{}.night_runs;
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
  command->add_flag("--noise", settings->noise,
                    "instead of results: each configuration's noise, split into within-process, between-process "
                    "and between-node spreads, and the regression rule's false alarms on A/A pairs, noisiest "
                    "first (docs/noise.md)");
  command->add_option("--night-runs", settings->night_runs, "with --noise: runs a night in the A/A pairs")
      ->capture_default_str();
  command->add_flag("--calibrations", settings->calibrations,
                    "instead of results: the calibrations torchsweep calibrate recorded, newest first, with their "
                    "hosts, environments and each configuration's noise (docs/noise.md)");
  command->add_flag("--regressions", settings->regressions,
                    "instead of results: the regressions nightly recorded (of the --sweep nights, where given), "
                    "newest first, with the id torchsweep bisect takes (docs/bisect.md)");
  command->add_flag("--summary", settings->summary,
                    "with --compare: a suite's summary, per value of the --group-by axes (none: one row): the "
                    "configurations run, how many passed and the geometric mean of their speedups");
  command->add_option("--baseline", settings->baseline,
                      "sweep id, name or tag to test every group against for regressions");
  add_regression_options(command, settings->rule);
  return [settings] {
    const auto format = parse_format(settings->format, "--format");
    auto database = store::open_read_only(settings->db);
    if (settings->adaptive) {
      std::cout << render(readers::adaptive_stops(database, settings->filter()), format, terminal_width());
      return exit_code::ok;
    }
    if (settings->calibrations) {
      std::cout << render(readers::calibrations_table(database), format, terminal_width());
      return exit_code::ok;
    }
    if (settings->regressions) {
      std::cout << render(readers::regressions_table(database, settings->filter()), format, terminal_width());
      return exit_code::ok;
    }
    if (settings->noise) {
      const readers::NoiseOptions options{settings->filter(), settings->rule, settings->night_runs};
      std::cout << render(readers::noise_table(database, options), format, terminal_width());
      return exit_code::ok;
    }
    readers::QueryOptions options;
    options.filter = settings->filter();
    options.group_by = settings->group_by;
    options.metrics = settings->metrics;
    options.compare = settings->compare;
    options.baseline = settings->baseline;
    options.memory_metric = settings->memory_metric;
    options.regression = settings->rule;
    if (settings->summary) {
      options.group_by.clear();
      std::cout << render(readers::suite_summary(database, options, settings->group_by), format, terminal_width());
      return exit_code::ok;
    }
    std::cout << render(readers::query(database, options), format, terminal_width());
    return exit_code::ok;
  };
}

Command add_export_command(CLI::App& app) {
  auto* command = app.add_subcommand("export",
                                     "every stored result as flat rows (CSV or JSON), results and steps as Parquet "
                                     "files, or each result as an MLflow run");
  struct Settings : FilterSettings {
    std::string out;
    std::vector<std::string> to;
    MlflowExport mlflow;
  };
  auto settings = std::make_shared<Settings>();
  add_filter_options(command, *settings, "csv");
  command->get_option("--format")->description("table | csv | json | parquet (with --out)");
  command->add_option("--out", settings->out,
                      "with --format parquet: the existing folder results.parquet and steps.parquet go to");
  command->add_option("--to", settings->to, "mlflow URI: each result as a run in that MLflow tracking store")
      ->expected(2);
  command->add_option("--experiment", settings->mlflow.experiment,
                      "with --to mlflow: one experiment for every result (default: each sweep's name)");
  command->add_option("--artifacts", settings->mlflow.artifacts,
                      "with --to mlflow: artifact location of the experiments it creates (default: beside a local "
                      "store, else the server's)");
  return [settings] {
    auto database = store::open_read_only(settings->db);
    if (!settings->to.empty()) {
      if (settings->to[0] != "mlflow") {
        throw InvalidInput("--to",
                           "expected 'mlflow URI' (the one tracker export writes to), got '" + settings->to[0] + "'");
      }
      if (!settings->out.empty()) throw InvalidInput("--out", "--out is for --format parquet, not --to");
      settings->mlflow.tracking_uri = settings->to[1];
      export_mlflow(database, settings->filter(), settings->mlflow);
      return exit_code::ok;
    }
    if (!settings->mlflow.experiment.empty() || !settings->mlflow.artifacts.empty()) {
      throw InvalidInput(settings->mlflow.experiment.empty() ? "--artifacts" : "--experiment",
                         "it is for --to mlflow URI");
    }
    if (settings->format == "parquet") {
      export_parquet(database, settings->filter(), settings->out);
      return exit_code::ok;
    }
    if (!settings->out.empty()) throw InvalidInput("--out", "--out is for --format parquet");
    const auto format = parse_format(settings->format, "--format");
    std::cout << render(readers::export_table(database, settings->filter(), "results"), format, terminal_width());
    return exit_code::ok;
  };
}

}  // namespace ts::cli
