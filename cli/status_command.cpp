#include <fmt/format.h>

#include <iostream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "shared/errors.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

Command add_status_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "status", "show sweeps (jobs per state), the connected agents and any connection still joining");
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
      return exit_code::ok;
    }
    Table sweeps{{"sweep", "state", "queued", "running", "done", "failed", "cancelled", "cost"}, {}};
    // An adaptive sweep: where each compared pair stands, and why it stopped.
    Table pairs{{"sweep", "pair", "state", "rounds", "speedup_interval", "power"}, {}};
    for (const auto& sweep : reply.at("sweeps")) {
      const auto& jobs = sweep.at("jobs");
      const auto count = [&](const char* state) { return jobs.value(state, int64_t{0}); };
      // What its priced runs cost, in the prices' unit (docs/methodology.md); "-" when none was priced.
      const auto cost = sweep.value("cost", nlohmann::json());
      sweeps.rows.push_back({sweep.at("sweep_id"), sweep.at("state"), count("queued"), count("running"), count("done"),
                             count("failed"), count("cancelled"),
                             cost.is_number() ? fmt::format("{:.4g}", cost.get<double>()) : std::string("-")});
      for (const auto& pair : sweep.value("adaptive", nlohmann::json::array())) {
        const auto& half = pair.at("half_width");
        const auto power = pair.value("power", nlohmann::json());
        pairs.rows.push_back({sweep.at("sweep_id"), pair.at("pair").dump(), pair.at("state"), pair.at("rounds"),
                              half.is_null() ? "n too small" : fmt::format("±{:.1f}%", half.get<double>() * 100),
                              power.is_null() ? "-" : fmt::format("{:.2f}", power.get<double>())});
      }
    }
    Table agents{{"agent", "address", "host", "cores", "gpus", "running_jobs"}, {}};
    for (const auto& agent : reply.at("agents")) {
      std::string running;
      for (const auto& job : agent.at("running")) running += (running.empty() ? "" : " ") + job.get<std::string>();
      agents.rows.push_back({agent.at("name"), agent.at("address"), agent.value("hostname", ""),
                             agent.value("cpu_cores", 0), agent.value("gpus", 0), running.empty() ? "-" : running});
    }
    // Connections whose hello is still arriving (an agent joining over a slow link, docs/protocol.md).
    Table joining{{"joining", "for_s", "received_bytes"}, {}};
    for (const auto& peer : reply.value("joining", nlohmann::json::array())) {
      joining.rows.push_back(
          {peer.at("address"), fmt::format("{:.0f}", peer.at("joining_s").get<double>()), peer.at("received_bytes")});
    }
    std::cout << (sweeps.rows.empty() ? "(no sweeps)\n" : render(sweeps, Format::table, terminal_width()));
    if (!pairs.rows.empty()) std::cout << "\n" << render(pairs, Format::table, terminal_width());
    std::cout << "\n"
              << (agents.rows.empty() ? "(no agents connected)\n" : render(agents, Format::table, terminal_width()));
    if (!joining.rows.empty()) std::cout << "\n" << render(joining, Format::table, terminal_width());
    return exit_code::ok;
  };
}

}  // namespace ts::cli
