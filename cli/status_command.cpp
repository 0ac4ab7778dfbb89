#include <cstdio>
#include <format>
#include <iostream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

Command add_status_command(CLI::App& app) {
  auto* command = app.add_subcommand("status", "show sweeps (jobs per state) and the connected agents");
  struct Settings {
    ClientSettings client;
    std::string sweep;
    bool json = false;
  };
  auto settings = std::make_shared<Settings>();
  add_client_options(command, settings->client);
  command->add_option("sweep", settings->sweep, "only this sweep");
  command->add_flag("--json", settings->json, "print the raw status document");
  return [settings] {
    nlohmann::json query = nlohmann::json::object();
    if (!settings->sweep.empty()) query["sweep"] = settings->sweep;
    const auto reply = request(settings->client, wire::make_message("status", query));
    if (settings->json) {
      std::cout << reply.dump(2) << "\n";
      return 0;
    }
    std::printf("%-44s %-10s %7s %7s %7s %7s %9s\n", "sweep", "state", "queued", "running", "done", "failed",
                "cancelled");
    for (const auto& sweep : reply.at("sweeps")) {
      const auto& jobs = sweep.at("jobs");
      const auto count = [&](const char* state) { return jobs.value(state, 0LL); };
      std::printf("%-44s %-10s %7lld %7lld %7lld %7lld %9lld\n", sweep.at("sweep_id").get<std::string>().c_str(),
                  sweep.at("state").get<std::string>().c_str(), count("queued"), count("running"), count("done"),
                  count("failed"), count("cancelled"));
      // An adaptive sweep: where each compared pair stands, and why it stopped.
      for (const auto& pair : sweep.value("adaptive", nlohmann::json::array())) {
        const auto& half = pair.at("half_width");
        const auto interval =
            half.is_null() ? std::string("n too small") : std::format("±{:.1f}%", half.get<double>() * 100);
        std::printf("    %-40s %-12s %3lld rounds, speedup interval %s\n", pair.at("pair").dump().c_str(),
                    pair.at("state").get<std::string>().c_str(), pair.at("rounds").get<long long>(), interval.c_str());
      }
    }
    std::printf("\n%-20s %-22s %-16s %5s %5s %s\n", "agent", "address", "host", "cores", "gpus", "running jobs");
    for (const auto& agent : reply.at("agents")) {
      std::string running;
      for (const auto& job : agent.at("running")) running += (running.empty() ? "" : " ") + job.get<std::string>();
      std::printf("%-20s %-22s %-16s %5d %5d %s\n", agent.at("name").get<std::string>().c_str(),
                  agent.at("address").get<std::string>().c_str(), agent.value("hostname", "").c_str(),
                  agent.value("cpu_cores", 0), agent.value("gpus", 0), running.empty() ? "-" : running.c_str());
    }
    return 0;
  };
}

}  // namespace ts::cli
