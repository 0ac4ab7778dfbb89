#include <cstdio>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "shared/errors.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

Command add_cancel_command(CLI::App& app) {
  auto* command = app.add_subcommand("cancel",
                                     "cancel a sweep (id or name) or one job (id): queued jobs are dropped, "
                                     "running ones killed");
  struct Settings {
    ClientSettings client;
    std::string target;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("target", settings->target, "SWEEP (id or name) or JOB (id: SWEEP_ID/NNNN)")->required();
  add_client_options(command, settings->client);
  return [settings] {
    // Job ids are the sweep id, a slash and the ordinal; sweep names and ids have no slash.
    const bool is_job = settings->target.find('/') != std::string::npos;
    const auto reply =
        request(settings->client, wire::make_message("cancel", {{is_job ? "job" : "sweep", settings->target}}));
    std::printf("cancelled %lld jobs\n", reply.at("jobs").get<long long>());
    return exit_code::ok;
  };
}

}  // namespace ts::cli
