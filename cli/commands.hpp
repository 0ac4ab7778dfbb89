#pragma once
// The modes of the torchsweep dispatcher: each registers its subcommand and
// returns the function that runs it (returning the exit code).
#include <CLI/CLI.hpp>
#include <functional>

namespace ts::cli {

using Command = std::function<int()>;

Command add_coordinator_command(CLI::App& app);
Command add_agent_command(CLI::App& app);
Command add_status_command(CLI::App& app);
Command add_submit_command(CLI::App& app);
Command add_cancel_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_query_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_confirm_command(CLI::App& app);
Command add_nightly_command(CLI::App& app);
Command add_judge_command(CLI::App& app);
Command add_resolve_command(CLI::App& app);
Command add_estimate_command(CLI::App& app);
Command add_weights_command(CLI::App& app);
Command add_gc_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_bisect_command(CLI::App& app);

}  // namespace ts::cli
