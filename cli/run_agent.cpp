#include <boost/asio.hpp>

#include "agent/agent.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/key_value.hpp"
#include "cli/shutdown.hpp"
#include "shared/errors.hpp"
#include "shared/wire/authentication.hpp"

namespace ts::cli {

Command add_agent_command(CLI::App& app) {
  auto* command = app.add_subcommand("agent", "run an agent: runs the coordinator's jobs on this node");
  struct Settings {
    std::string coordinator = "127.0.0.1:7000";
    std::string name;
    std::vector<std::string> labels, runners, python_runners, data_roots, model_roots;
    std::string work_dir, token_file, tls_ca, mpirun = "mpirun", peak_probe = "cached";
    std::string nvml_library = agent::AgentOptions{}.nvml_library.string();
    std::string powercap_root = agent::AgentOptions{}.powercap_root.string();
    bool keep_job_dirs = false, no_default_runners = false;
    double join_error_after_s = std::chrono::duration<double>(agent::AgentOptions{}.join_error_after).count();
    std::map<std::string, std::filesystem::path> environments;
    std::vector<std::string> prices;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--coordinator", settings->coordinator, "coordinator HOST:PORT")->capture_default_str();
  command->add_option("--name", settings->name, "agent identity (default: the hostname)");
  command
      ->add_option("--join-error-after-s", settings->join_error_after_s,
                   "log at ERROR, with the reason, each failed attempt to register once it has tried this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--label", settings->labels, "KEY=VALUE label reported to the coordinator (repeatable)");
  command->add_option("--runner", settings->runners,
                      "NAME=PATH: an executable honouring the worker contract (repeatable)");
  command->add_option("--python-runner", settings->python_runners,
                      "NAME=SCRIPT: a Python script honouring the worker contract, started by the interpreter of "
                      "each environment (--env) as the installed Python runners are (repeatable)");
  command->add_option("--token-file", settings->token_file,
                      "file holding the coordinator's shared token (default: $TORCHSWEEP_TOKEN; docs/security.md)");
  add_tls_ca_option(command, settings->tls_ca);
  add_peak_probe_option(command, settings->peak_probe);
  command->add_option("--work-dir", settings->work_dir,
                      "job directories and the spool of undelivered results (default: $TMPDIR/torchsweep-agent-NAME)");
  add_data_root_option(command, settings->data_roots);
  add_price_option(command, settings->prices);
  add_model_path_option(command, settings->model_roots);
  add_environment_option(command, settings->environments);
  command
      ->add_option("--mpirun", settings->mpirun, "Open MPI's mpirun, which starts multi-rank jobs (docs/multi-gpu.md)")
      ->capture_default_str();
  command
      ->add_option("--nvml-library", settings->nvml_library,
                   "NVIDIA's management library, for the GPU telemetry of results (docs/gpu-telemetry.md)")
      ->capture_default_str();
  command
      ->add_option("--powercap-root", settings->powercap_root,
                   "the kernel's powercap tree, for the energy of CPU results (RAPL; docs/methodology.md)")
      ->capture_default_str();
  command->add_flag("--no-default-runners", settings->no_default_runners,
                    "register only the --runner and --env ones, not those installed beside torchsweep");
  command->add_flag("--keep-job-dirs", settings->keep_job_dirs,
                    "keep the directories of successful jobs too (failed ones are always kept)");
  return [settings] {
    agent::AgentOptions options;
    options.coordinator = wire::parse_endpoint(settings->coordinator, "--coordinator");
    options.name = settings->name;
    options.join_error_after = std::chrono::milliseconds(static_cast<int64_t>(settings->join_error_after_s * 1000));
    options.work_directory = settings->work_dir;
    options.data_roots.assign(settings->data_roots.begin(), settings->data_roots.end());
    options.model_roots.assign(settings->model_roots.begin(), settings->model_roots.end());
    options.token = wire::load_token(settings->token_file);
    options.keep_job_directories = settings->keep_job_dirs;
    options.discover_runners = !settings->no_default_runners;
    options.environments = settings->environments;
    options.price_per_hour = parse_prices(settings->prices);
    options.rank_launch.mpirun = settings->mpirun;
    options.nvml_library = settings->nvml_library;
    options.powercap_root = settings->powercap_root;
    options.peak_probe = agent::parse_peak_probe(settings->peak_probe, "--peak-probe");
    options.tls = client_tls(settings->tls_ca);
    for (const auto& label : settings->labels) add_key_value(options.labels, label, "--label");
    for (const auto& runner : settings->runners) add_key_value(options.runners, runner, "--runner");
    for (const auto& runner : settings->python_runners) {
      add_key_value(options.python_runners, runner, "--python-runner");
    }
    boost::asio::io_context io;
    agent::Agent node(io, options);
    node.start();
    const auto signals = stop_on_signals(io, [&] { node.stop(); });
    node.on_refused([&] { signals->cancel(); });  // nothing left to wait for
    io.run();
    return node.refused() ? exit_code::unavailable : exit_code::ok;
  };
}

}  // namespace ts::cli
