#include <boost/asio.hpp>

#include "agent/agent.hpp"
#include "cli/commands.hpp"
#include "cli/key_value.hpp"
#include "cli/shutdown.hpp"
#include "shared/errors.hpp"

namespace ts::cli {

Command add_agent_command(CLI::App& app) {
  auto* command = app.add_subcommand("agent", "run an agent: runs the coordinator's jobs on this node");
  struct Settings {
    std::string coordinator = "127.0.0.1:7000";
    std::string name;
    std::vector<std::string> labels, runners;
    std::string work_dir;
    bool keep_job_dirs = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--coordinator", settings->coordinator, "coordinator HOST:PORT")->capture_default_str();
  command->add_option("--name", settings->name, "agent identity (default: the hostname)");
  command->add_option("--label", settings->labels, "KEY=VALUE label reported to the coordinator (repeatable)");
  command->add_option("--runner", settings->runners,
                      "NAME=PATH: an executable honouring the worker contract (repeatable)");
  command->add_option("--work-dir", settings->work_dir,
                      "job directories and the spool of undelivered results (default: $TMPDIR/torchsweep-agent-NAME)");
  command->add_flag("--keep-job-dirs", settings->keep_job_dirs,
                    "keep the directories of successful jobs too (failed ones are always kept)");
  return [settings] {
    agent::AgentOptions options;
    options.coordinator = wire::parse_endpoint(settings->coordinator, "--coordinator");
    options.name = settings->name;
    options.work_directory = settings->work_dir;
    options.keep_job_directories = settings->keep_job_dirs;
    for (const auto& label : settings->labels) add_key_value(options.labels, label, "--label");
    for (const auto& runner : settings->runners) add_key_value(options.runners, runner, "--runner");
    boost::asio::io_context io;
    agent::Agent node(io, options);
    node.start();
    const auto signals = stop_on_signals(io, [&] { node.stop(); });
    io.run();
    return node.refused() ? exit_code::unavailable : exit_code::ok;
  };
}

}  // namespace ts::cli
