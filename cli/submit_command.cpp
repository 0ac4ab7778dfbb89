#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "shared/sweep/sweep.hpp"

namespace ts::cli {

Command add_submit_command(CLI::App& app) {
  auto* command = app.add_subcommand("submit", "validate a sweep file and print the jobs it expands to");
  struct Settings {
    std::string sweep;
    bool dry_run = false;
    bool json = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("sweep", settings->sweep, "sweep file (YAML or JSON)")->required();
  // Sending the jobs to a coordinator comes with scheduling; until then the
  // flag is required so nobody mistakes the expansion for a submission.
  command->add_flag("--dry-run", settings->dry_run, "expand and print the jobs; send nothing")->required();
  command->add_flag("--json", settings->json, "print the job documents as JSON lines");
  return [settings] {
    const auto sweep = sweep::load(settings->sweep);
    if (settings->json) {
      for (const auto& job : sweep.jobs) std::cout << job.document.dump() << "\n";
      return 0;
    }
    std::printf("sweep %s: %zu configurations x %lld repeats = %zu jobs (priority %lld, max %lld attempts)\n",
                sweep.name.c_str(), sweep.configurations, static_cast<long long>(sweep.repeats), sweep.jobs.size(),
                static_cast<long long>(sweep.priority), static_cast<long long>(sweep.max_attempts));
    std::printf("%7s %6s  %s\n", "ordinal", "repeat", "configuration");
    for (const auto& job : sweep.jobs) {
      std::printf("%7lld %6lld  %s\n", static_cast<long long>(job.ordinal), static_cast<long long>(job.repeat),
                  job.config_key.c_str());
    }
    return 0;
  };
}

}  // namespace ts::cli
