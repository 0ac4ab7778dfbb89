#pragma once
// The agent's connection to the coordinator: hello with the node's
// capabilities, heartbeats, reconnection with backoff when the coordinator
// goes away, and the jobs it is assigned, each run by the Executor through a
// runner the agent was started with. Outcomes are spooled on disk until the
// coordinator acknowledges them, so a lost connection loses no result; a
// superseded one is kept in spool/superseded/. Coordinator silence for 3
// heartbeat intervals ends the session (a partition) and it reconnects.
// Each runner's processes are recorded in runners/ and killed by the next
// life of an agent that died without stopping them.
#include <boost/asio.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agent/flop_counts.hpp"
#include "agent/node/environments.hpp"
#include "agent/node/gpu_telemetry.hpp"
#include "agent/node/peak_flops.hpp"
#include "agent/node/powercap.hpp"
#include "agent/rank_launch.hpp"
#include "agent/spool.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"
#include "shared/wire/tls.hpp"

namespace ts::agent {

namespace asio = boost::asio;

struct AgentOptions {
  wire::Endpoint coordinator{"127.0.0.1", 7000};
  std::string name;  // default: the hostname
  std::map<std::string, std::string> labels;
  // Runner name -> executable. Beside the running torchsweep binary the
  // agent also finds "libtorch" (torchsweep-worker), "torch-compile",
  // "tensorflow" and "jax" (torchsweep-NAME), each registered only when its
  // --version answers (its framework imports here).
  std::map<std::string, std::string> runners;
  // Runner name -> a Python script honouring the contract, started by each
  // environment's interpreter as the installed Python runners are (an
  // operator's runner on the same harness, a test's): --python-runner.
  std::map<std::string, std::string> python_runners;
  bool discover_runners = true;  // false: only the runners named above
  // Environment name -> Python interpreter (--env NAME=PYTHON), beside the
  // installed ones (agent/node/environments.hpp); a name given here wins.
  std::map<std::string, std::filesystem::path> environments;
  std::filesystem::path work_directory;  // default: $TMPDIR/torchsweep-agent-<name>
  // Where jobs may read imagefolder data (agent/allowed_roots.hpp); none: synthetic only.
  std::vector<std::filesystem::path> data_roots;
  // Where jobs may find the user's own models, python: modules and
  // torchscript: files (--model-path); none: no such models.
  std::vector<std::filesystem::path> model_roots;
  bool keep_job_directories = false;  // those of failed jobs are always kept
  std::optional<std::string> token;   // the coordinator's shared token (docs/security.md)
  RankLaunchSettings rank_launch;     // how multi-rank jobs are started (mpirun)
  // The devices' peak FLOP/s, measured by the LibTorch worker and cached in
  // the work directory (agent/node/peak_flops.hpp).
  PeakProbe peak_probe = PeakProbe::cached;
  // TLS to the coordinator, verified against a CA file (docs/security.md).
  std::shared_ptr<wire::ssl::context> tls;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  // Trying to register for longer than this (since the start, or since the
  // last session ended) is an ERROR, with the reason, at each further failed
  // attempt (docs/protocol.md, "Joining").
  std::chrono::milliseconds join_error_after{60'000};
  // NVML, for the GPU telemetry of every result (agent/node/gpu_telemetry.hpp).
  std::filesystem::path nvml_library = "libnvidia-ml.so.1";
  std::chrono::milliseconds telemetry_interval{100};
  // The kernel's powercap tree, for a CPU job's energy (agent/node/powercap.hpp).
  std::filesystem::path powercap_root = "/sys/class/powercap";
  // Price per device-hour by device name (--price-per-hour): each result's
  // cost (agent/judge/cost.hpp); a job's price_per_hour wins.
  std::map<std::string, double> price_per_hour;
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options);
  void start();
  void stop();
  // What this agent reports at hello (schemas/protocol/hello.schema.json).
  const nlohmann::json& capabilities() const noexcept { return capabilities_; }
  // Set once a coordinator refused us for good (protocol version, token).
  bool refused() const noexcept { return refused_; }
  // Called once when that happens, e.g. to let the program end.
  void on_refused(std::function<void()> callback) { on_refused_ = std::move(callback); }

 private:
  // One attempt running here; at most one per job, whatever the coordinator asks.
  struct RunningJob {
    int64_t attempt = 0;
    std::vector<int64_t> gpus;
    bool cpu = false;        // a CPU job: at most one at a time
    bool exclusive = false;  // needs the node to itself
    std::shared_ptr<bool> cancel_requested = std::make_shared<bool>(false);

    // What an assignment would run here (schemas/protocol/assign.schema.json).
    static RunningJob of(const nlohmann::json& assign);
  };

  asio::awaitable<void> run();
  asio::awaitable<void> session(std::shared_ptr<wire::Connection> connection, std::function<void()> on_welcome);
  asio::awaitable<void> heartbeats(std::shared_ptr<wire::Connection> connection, std::chrono::milliseconds interval);
  // Cut off from the coordinator for half its reattach grace, the agent
  // stops its runners: the coordinator is about to queue their jobs again,
  // and two live attempts of one job must never be.
  asio::awaitable<void> fence();
  void on_message(const std::string& type, const nlohmann::json& message);
  void accept(const nlohmann::json& assign);
  // Why `candidate` (attempt of `job_id`) cannot start now (the same job or
  // a conflicting one still runs here), or nothing when it can.
  std::optional<std::string> conflict(const std::string& job_id, const RunningJob& candidate);
  // Kills what the runners of a previous life of this agent left running.
  void kill_leftover_runners();
  asio::awaitable<void> run_job(nlohmann::json assign, Placement placement);
  // Adds execution.counted_flops to a result whose runner counts none, by
  // the runner that counts for it in the same environment, or a warning
  // saying why not.
  asio::awaitable<void> count_flops(nlohmann::json& result, const nlohmann::json& job, const Placement& placement,
                                    const std::filesystem::path& directory);
  // The telemetry of a job on these GPUs: "unavailable" without GPUs or NVML.
  GpuTelemetry telemetry_for(const std::vector<int64_t>& gpus) const;
  // Samples `telemetry` every telemetry_interval until `running` turns false.
  // What the agent reads while a job runs: its GPUs, or the CPU packages' energy.
  struct JobMeters {
    GpuTelemetry telemetry;
    EnergyMeter cpu_energy;
    TimedWindow window;
    bool running = true;
  };
  // The CPU packages' energy meter for a CPU job: "absent" where RAPL cannot be read.
  EnergyMeter cpu_energy_meter() const;
  // Samples `meters` every telemetry_interval until it stops running.
  asio::awaitable<void> sample(std::shared_ptr<JobMeters> meters);
  // Spools an outcome (job_result or job_failed) and sends it when connected.
  void deliver(const nlohmann::json& outcome);
  void send(const nlohmann::json& message);
  // Measures the devices' peak (capabilities.peak_flops), or reads its cache.
  void measure_peak(PeakProbe mode);

  asio::io_context& io_;
  AgentOptions options_;
  std::map<std::string, Runner> runners_;
  std::map<std::string, std::filesystem::path> environments_;
  std::map<Placement, nlohmann::json> offered_;  // where a runner answered: what its --version said
  FlopCounts flop_counts_;
  nlohmann::json capabilities_;
  std::shared_ptr<const Nvml> nvml_;  // null: nvml_unavailable_ says why
  std::string nvml_unavailable_;
  std::optional<Powercap> powercap_;  // none: powercap_unavailable_ says why
  std::string powercap_unavailable_;
  std::shared_ptr<wire::Connection> connection_;
  asio::steady_timer backoff_timer_;
  asio::steady_timer fence_timer_;
  std::optional<std::chrono::milliseconds> fence_after_;  // from the last welcome
  std::map<std::string, RunningJob> running_;
  // A result's FLOP rate exceeded the peak it was judged against: the peak
  // is measured again before the next job that finds the node idle, once
  // in the agent's life (a probe that still falls short would repeat).
  enum class PeakCheck { trusted, stale, remeasured } peak_check_ = PeakCheck::trusted;
  std::optional<Spool> spool_;  // made once the work directory is known
  std::function<void()> on_refused_;
  bool stopped_ = false;
  bool refused_ = false;
};

}  // namespace ts::agent
