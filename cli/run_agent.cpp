#include <boost/asio.hpp>

#include "agent/agent.hpp"
#include "cli/commands.hpp"
#include "cli/shutdown.hpp"
#include "shared/errors.hpp"

namespace ts::cli {
namespace {

// "KEY=VALUE" into a map entry; `field` names the option in errors.
void add_pair(std::map<std::string, std::string>& into, const std::string& text, const std::string& field) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) throw InvalidInput(field, "expected KEY=VALUE, got '" + text + "'");
  into[text.substr(0, equals)] = text.substr(equals + 1);
}

}  // namespace

Command add_agent_command(CLI::App& app) {
  auto* command = app.add_subcommand("agent", "run an agent: runs the coordinator's jobs on this node");
  struct Settings {
    std::string coordinator = "127.0.0.1:7000";
    std::string name;
    std::vector<std::string> labels, runners;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--coordinator", settings->coordinator, "coordinator HOST:PORT")->capture_default_str();
  command->add_option("--name", settings->name, "agent identity (default: the hostname)");
  command->add_option("--label", settings->labels, "KEY=VALUE label reported to the coordinator (repeatable)");
  command->add_option("--runner", settings->runners,
                      "NAME=PATH: an executable honouring the worker contract (repeatable)");
  return [settings] {
    agent::AgentOptions options;
    options.coordinator = wire::parse_endpoint(settings->coordinator, "--coordinator");
    options.name = settings->name;
    for (const auto& label : settings->labels) add_pair(options.labels, label, "--label");
    for (const auto& runner : settings->runners) add_pair(options.runners, runner, "--runner");
    boost::asio::io_context io;
    agent::Agent node(io, options);
    node.start();
    const auto signals = stop_on_signals(io, [&] { node.stop(); });
    io.run();
    return node.refused() ? exit_code::unavailable : exit_code::ok;
  };
}

}  // namespace ts::cli
