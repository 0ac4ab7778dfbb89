#include <cstdio>
#include <iostream>

#include "agent/node/node.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "shared/errors.hpp"
#include "shared/sweep/runnable.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

Command add_submit_command(CLI::App& app) {
  auto* command = app.add_subcommand("submit", "validate a sweep file and queue its jobs on the coordinator");
  struct Settings {
    ClientSettings client;
    std::string sweep;
    bool dry_run = false;
    bool json = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("sweep", settings->sweep, "sweep file (YAML or JSON)")->required();
  add_client_options(command, settings->client);
  command->add_flag("--dry-run", settings->dry_run, "expand and print the jobs; send nothing");
  command->add_flag("--json", settings->json, "with --dry-run: print the job documents as JSON lines");
  return [settings] {
    const auto spec = sweep::read_document(settings->sweep);
    const auto sweep = sweep::expand(spec, settings->sweep);  // local errors name the file
    if (!settings->dry_run) {
      const auto reply =
          request(settings->client,
                  wire::make_message("submit",
                                     {{"sweep", spec}, {"origin", settings->sweep}, {"submitter", submitter_name()}}));
      for (const auto& warning : reply.value("warnings", std::vector<std::string>{})) {
        std::fprintf(stderr, "warning: %s\n", warning.c_str());
      }
      std::printf("submitted sweep %s: %lld jobs (%lld configurations)\n",
                  reply.at("sweep_id").get<std::string>().c_str(), reply.at("jobs").get<long long>(),
                  reply.at("configurations").get<long long>());
      return exit_code::ok;
    }
    // A dry run checks the models, modes, precisions and environments
    // against the runners installed here that answer, read as the
    // coordinator reads an agent's.
    const auto local = sweep::known_runners({agent::installed_runner_capabilities()});
    for (const auto& warning : sweep::check_runnable(sweep, local, "as the runners installed here list them")) {
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    }
    if (settings->json) {
      for (const auto& job : sweep.jobs) std::cout << job.document.dump() << "\n";
      return exit_code::ok;
    }
    std::printf("sweep %s: %zu configurations x %lld repeats = %zu jobs (priority %lld, max %lld attempts)\n",
                sweep.name.c_str(), sweep.configurations, static_cast<long long>(sweep.repeats), sweep.jobs.size(),
                static_cast<long long>(sweep.priority), static_cast<long long>(sweep.max_attempts));
    Table jobs{{"ordinal", "repeat", "configuration"}, {}};
    for (const auto& job : sweep.jobs) jobs.rows.push_back({job.ordinal, job.repeat, job.config_key});
    std::cout << render(jobs, Format::table, terminal_width());
    return exit_code::ok;
  };
}

}  // namespace ts::cli
