#pragma once
// What `torchsweep run` and `torchsweep calibrate` share (docs/cli.md): a
// coordinator on a free loopback port, one local agent and the store, all
// in this process, the sweep submitted to them; the jobs still run in their
// own runner processes. Prints progress while the sweep runs.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace ts::cli {

struct LocalSweepSettings {
  std::string sweep, db = "torchsweep.db", work_dir, peak_probe = "cached";
  double budget_s = 0;
  double budget_grace_s = 60;
  std::vector<std::string> runners, python_runners, data_roots, model_roots;
  std::map<std::string, std::filesystem::path> environments;
  std::vector<std::string> prices;
  bool verbose = false, keep_job_dirs = false, no_default_runners = false;
};

// The local agent's: runners, work directory, roots, environments, prices.
void add_local_agent_options(CLI::App* command, LocalSweepSettings& settings);
// The sweep file, the store, the budget and the local agent's options.
void add_local_sweep_options(CLI::App* command, LocalSweepSettings& settings);

// Runs `spec` (read from settings.sweep) to its end, its budget's or an
// interruption; then, unless interrupted, `report(store, sweep_id)`.
// Returns the exit code: run_failed when interrupted or a job failed.
int run_local_sweep(const LocalSweepSettings& settings, const nlohmann::json& spec,
                    const std::function<void(store::Store&, const std::string&)>& report);

// A command whose local agent will write the store `db` (bisect, explain) migrates an existing one first, as
// run_local_sweep would, so that what it reads before its first sweep reads this version's schema.
void migrate_for_local_agent(const std::string& db);

}  // namespace ts::cli
