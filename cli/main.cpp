// torchsweep: one dispatcher for every mode but the worker.
//   torchsweep run | coordinator | agent | submit | status | cancel | query | export | report | confirm | nightly
//              | judge | resolve | weights | estimate | explain | gc
// Exit codes (docs/exit-codes.md): 0 ok, 1 internal error, 2 invalid input,
// 3 work failed, 4 a peer could not be reached or refused us, 5 the store
// failed (locked past the busy timeout, disk full, I/O), 6 a regression was
// confirmed (confirm, nightly).
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/version.hpp"
#include "store/sqlite.hpp"

int main(int argc, char** argv) {
  CLI::App app{"torchsweep " + std::string(ts::version::number()) + ": distributed benchmark orchestrator for PyTorch"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug | info | warn | error | off")->capture_default_str();
  app.set_version_flag("--version",
                       std::string(ts::version::number()) + " (" + std::string(ts::version::commit()) + ")");
  const std::vector<std::pair<std::string, ts::cli::Command>> commands{
      {"coordinator", ts::cli::add_coordinator_command(app)},
      {"agent", ts::cli::add_agent_command(app)},
      {"status", ts::cli::add_status_command(app)},
      {"submit", ts::cli::add_submit_command(app)},
      {"cancel", ts::cli::add_cancel_command(app)},
      {"run", ts::cli::add_run_command(app)},
      {"calibrate", ts::cli::add_calibrate_command(app)},
      {"query", ts::cli::add_query_command(app)},
      {"export", ts::cli::add_export_command(app)},
      {"report", ts::cli::add_report_command(app)},
      {"confirm", ts::cli::add_confirm_command(app)},
      {"nightly", ts::cli::add_nightly_command(app)},
      {"judge", ts::cli::add_judge_command(app)},
      {"resolve", ts::cli::add_resolve_command(app)},
      {"weights", ts::cli::add_weights_command(app)},
      {"estimate", ts::cli::add_estimate_command(app)},
      {"explain", ts::cli::add_explain_command(app)},
      {"bisect", ts::cli::add_bisect_command(app)},
      {"gc", ts::cli::add_gc_command(app)},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? ts::exit_code::ok : ts::exit_code::invalid_input;
  } catch (const ts::InvalidInput& error) {  // an option's own check (--env): it ended the program uncaught
    ts::log::error("{}", error.what());
    return ts::exit_code::invalid_input;
  }
  try {
    ts::log::set_level(ts::log::parse_level(log_level));
    for (const auto& [name, run] : commands) {
      if (app.got_subcommand(name)) {
        ts::log::set_program(name);
        return run();
      }
    }
  } catch (const ts::store::SqliteError& error) {
    ts::log::error("the store failed: {}; a restarted coordinator resumes from the store", error.what());
    return ts::exit_code::store_failed;
  } catch (const ts::InvalidInput& error) {
    ts::log::error("{}", error.what());
    return ts::exit_code::invalid_input;
  } catch (const std::runtime_error& error) {
    ts::log::error("{}", error.what());
    return ts::exit_code::unavailable;
  } catch (const std::exception& error) {
    ts::log::error("internal error: {}", error.what());
    return ts::exit_code::internal_error;
  }
  return ts::exit_code::internal_error;
}
