// torchsweep confirm SWEEP --baseline B: reruns each regression the rule
// flags once, through the coordinator, and classifies every regression as
// confirmed, unconfirmed or suspicious (readers/regressions.hpp). Exits 6
// when a regression is confirmed: the nightly path alerts on it.
#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/filter_options.hpp"
#include "shared/errors.hpp"

namespace ts::cli {

Command add_confirm_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "confirm",
      "rerun each regression flagged against the baseline once, then say which are confirmed (exit 6 if any)");
  struct Settings {
    ClientSettings client;
    std::string db = "torchsweep.db", sweep, baseline, format = "table";
    int64_t runs = 0, timeout_s = 3600;
    readers::RegressionRule rule;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("sweep", settings->sweep, "the sweep judged: id, or name for its newest run")->required();
  command->add_option("--baseline", settings->baseline, "sweep id, name or tag to judge it against")->required();
  command->add_option("--db", settings->db, "the coordinator's SQLite store, read here")->capture_default_str();
  add_confirmation_options(command, settings->runs, settings->timeout_s);
  add_regression_options(command, settings->rule);
  command->add_option("--format", settings->format, "table | csv | json")->capture_default_str();
  add_client_options(command, settings->client);
  return [settings] {
    const auto format = parse_format(settings->format, "--format");
    readers::RegressionOptions options;
    options.filter.sweeps = {settings->sweep};
    options.baseline = settings->baseline;
    options.rule = settings->rule;
    const auto table = confirm_regressions(settings->client, settings->db, options, settings->runs,
                                           std::chrono::seconds(settings->timeout_s));
    print_classification(table, format);
    return count_classifications(table)["confirmed"] > 0 ? exit_code::regression_confirmed : exit_code::ok;
  };
}

}  // namespace ts::cli
