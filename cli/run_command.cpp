// torchsweep run SWEEP: the embedded default (cli/local_sweep.hpp), then the
// results table, the comparisons the sweep has both sides of, and the report.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/local_sweep.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "readers/profile_tops.hpp"
#include "readers/query.hpp"
#include "readers/report.hpp"
#include "shared/sweep/sweep.hpp"

namespace ts::cli {
namespace {

// Beside the store: runs/torchsweep.db -> runs/torchsweep.report.html.
std::string report_beside(const std::string& db) {
  return std::filesystem::path(db).replace_extension(".report.html").string();
}

void print_results(store::Store& store, const std::string& sweep_id, const std::string& db, const std::string& report) {
  readers::QueryOptions options;
  options.filter.sweeps = {sweep_id};
  // A language model's throughput in tokens too, and a generation's prefill and per-token decode
  // latency (docs/language-models.md), where the sweep has them.
  // Compiled configurations: the compile time (the first iteration's) and the accuracy gate's worst
  // deviation; `inaccurate` counts runs that failed the gate (docs/compiler.md).
  options.metrics = {"epoch_time", "samples_per_s", "tokens_per_s", "prefill_time", "decode_latency",
                     "decode_p99", "peak_memory",   "mfu",          "compile_time", "accuracy_deviation"};
  auto plain = readers::query(store.database(), options);
  // Columns no configuration has a figure in are left out; peak_below_achieved, a count, when no run has it.
  for (const std::string optional :
       {"tokens_per_s", "prefill_ms", "decode_p50_ms", "decode_p99_ms", "accuracy_deviation", "peak_below_achieved"}) {
    const auto column = readers::column_of(plain, optional);
    const auto figure = [&](const nlohmann::json& cell) {
      return !cell.is_null() && !(optional == "peak_below_achieved" && cell == 0);
    };
    if (std::any_of(plain.rows.begin(), plain.rows.end(), [&](const auto& row) { return figure(row[column]); })) {
      continue;
    }
    plain.columns.erase(plain.columns.begin() + static_cast<std::ptrdiff_t>(column));
    for (auto& row : plain.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(column));
  }
  options.metrics.clear();
  std::cout << "\nPer-configuration medians (sweep " << sweep_id << "):\n"
            << render(plain, Format::table, terminal_width());
  // A profiled sweep (the job field profile): where each configuration's profiled step goes.
  if (const auto tops = readers::profile_tops(store.database(), options.filter); !tops.rows.empty()) {
    std::cout << "\nWhere a profiled step's time goes (the operator and GPU kernel most often on top, with their "
                 "median share; torchsweep explain A B compares two configurations):\n"
              << render(tops, Format::table, terminal_width());
  }
  // A comparison is printed when some configuration has both sides.
  const auto print_comparison = [&](const std::string& axis, const std::string& title) {
    options.compare = axis;
    const auto compared = readers::query(store.database(), options);
    const auto speedup = readers::column_of(compared, "speedup");
    if (std::any_of(compared.rows.begin(), compared.rows.end(),
                    [&](const auto& row) { return !row[speedup].is_null(); })) {
      std::cout << "\n" << title << "\n" << render(compared, Format::table, terminal_width());
    }
  };
  print_comparison("mode", "Compiled vs eager (speedup = eager time / compiled time, 95% bootstrap interval):");
  const auto data = readers::column_of(plain, "data");
  if (std::any_of(plain.rows.begin(), plain.rows.end(), [&](const auto& row) { return row[data] != "synthetic"; })) {
    print_comparison("data=synthetic,*",
                     "Real vs synthetic data (speedup = synthetic time / real-data time; input_stall = the "
                     "fraction of an epoch spent waiting for batches):");
  }
  std::cout << "\nStored in " << db << "; ask again with: torchsweep query --db " << db << " --sweep " << sweep_id
            << " --compare mode\n";
  if (report.empty()) return;
  readers::ReportOptions report_options;
  report_options.filter.sweeps = {sweep_id};
  report_options.store_path = db;
  readers::write_report(store.database(), report_options, report);
  std::cout << "Report (charts, history, reproducing commands): " << report << "\n";
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "run", "run a sweep on this machine: coordinator, one local agent and the store in one command");
  struct RunSettings {
    LocalSweepSettings local;
    std::string report;
    bool no_report = false;
  };
  auto settings = std::make_shared<RunSettings>();
  add_local_sweep_options(command, settings->local);
  command->add_option("--report", settings->report,
                      "where the HTML report goes (default: beside the store, DB.report.html)");
  command->add_flag("--no-report", settings->no_report, "write no HTML report");
  return [settings] {
    const auto& db = settings->local.db;
    const auto report = settings->no_report        ? std::string()
                        : settings->report.empty() ? report_beside(db)
                                                   : settings->report;
    return run_local_sweep(
        settings->local, sweep::read_document(settings->local.sweep),
        [&](store::Store& store, const std::string& sweep_id) { print_results(store, sweep_id, db, report); });
  };
}

}  // namespace ts::cli
