// torchsweep report: the store's results as one offline HTML page (docs/report.md).
#include <iostream>

#include "cli/commands.hpp"
#include "cli/filter_options.hpp"
#include "readers/report.hpp"
#include "shared/errors.hpp"
#include "store/migrations.hpp"

namespace ts::cli {

Command add_report_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "report", "one self-contained HTML page: speedups, throughput, memory, history with change points, regressions");
  struct Settings : FilterSettings {
    std::string baseline, out = "report.html";
    readers::RegressionRule rule;
  };
  auto settings = std::make_shared<Settings>();
  add_filter_options(command, *settings, "");
  command->add_option("--baseline", settings->baseline,
                      "sweep id, name or tag to judge regressions against (and to mark in the history)");
  add_regression_options(command, settings->rule);
  command->add_option("--out", settings->out, "the HTML file to write")->capture_default_str();
  return [settings] {
    auto database = store::open_read_only(settings->db);
    readers::ReportOptions options;
    options.filter = settings->filter();
    options.baseline = settings->baseline;
    options.rule = settings->rule;
    options.store_path = settings->db;
    readers::write_report(database, options, settings->out);
    std::cout << "report written to " << settings->out << "\n";
    return exit_code::ok;
  };
}

}  // namespace ts::cli
