#include "agent/agent.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "agent/allowed_roots.hpp"
#include "agent/executor.hpp"
#include "agent/judge/judge.hpp"
#include "agent/judge/summary.hpp"
#include "agent/model_commits.hpp"
#include "agent/node/capabilities.hpp"
#include "agent/node/machine_condition.hpp"
#include "agent/node/probe_cache.hpp"
#include "agent/node/process_tree.hpp"
#include "agent/rank_launch.hpp"
#include "agent/trace_shipping.hpp"
#include "agent/trace_summary.hpp"
#include "shared/errors.hpp"
#include "shared/host_name.hpp"
#include "shared/job_fields.hpp"
#include "shared/job_resolution.hpp"
#include "shared/log.hpp"
#include "shared/model_lists.hpp"
#include "shared/runner_contract.hpp"
#include "shared/seconds.hpp"
#include "shared/spawn_checked.hpp"
#include "shared/version.hpp"
#include "shared/wire/dial.hpp"
#include "shared/wire/handshake.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::agent {

using asio::use_awaitable;

namespace {

// A progress line from a runner, checked before it goes on the wire: a
// runner's bad line must not cost the agent its connection.
std::optional<nlohmann::json> progress_fields(const nlohmann::json& line) {
  if (!line.is_object()) return std::nullopt;
  using namespace runner_contract;
  const auto epoch = line.find(std::string(progress_epoch)), epochs = line.find(std::string(progress_epochs)),
             seconds = line.find(std::string(progress_seconds));
  if (epoch == line.end() || epochs == line.end() || seconds == line.end()) return std::nullopt;
  if (!epoch->is_number_integer() || !epochs->is_number_integer() || !seconds->is_number()) return std::nullopt;
  if (*epoch < 1 || *epochs < 1 || *seconds < 0) return std::nullopt;
  // The wire's progress message has fields of its own (schemas/protocol/progress.schema.json).
  return nlohmann::json{{"epoch", *epoch}, {"epochs", *epochs}, {"seconds", *seconds}};
}

}  // namespace

Agent::Agent(asio::io_context& io, AgentOptions options)
    : io_(io), options_(std::move(options)), backoff_timer_(io), fence_timer_(io) {
  // The runners and environments installed beside torchsweep, unless told
  // otherwise; a runner only where its framework imports (its --version
  // answers). Runners and environments given by name are the operator's
  // word: they win over installed ones of their name, and stay.
  std::set<std::string> discovered;
  if (options_.discover_runners) {
    auto installed = installation();
    for (auto& [name, runner] : installed.runners) {
      if (options_.runners.contains(name) || options_.python_runners.contains(name)) continue;
      runners_[name] = std::move(runner);
      discovered.insert(name);
    }
    environments_ = std::move(installed.environments);
  }
  for (const auto& [name, program] : options_.runners) runners_[name] = {program, false, ""};
  for (const auto& [name, script] : options_.python_runners) runners_[name] = {script, true, ""};
  for (const auto& [name, python] : options_.environments) environments_[name] = python;
  if (options_.name.empty()) options_.name = host_name();
  if (options_.work_directory.empty()) {
    options_.work_directory = std::filesystem::temp_directory_path() / ("torchsweep-agent-" + options_.name);
  }
  std::filesystem::create_directories(options_.work_directory);
  // The machine's answers, not one work directory's: every agent and `torchsweep run` of this user shares them
  // (a daemon without a home keeps them in its work directory).
  auto probe_file = user_probe_cache();
  if (probe_file.empty()) probe_file = options_.work_directory / "probes.json";
  const auto probes = probe_runners(runners_, environments_, probe_file);
  for (const auto& [placement, probe] : probes) {
    if (probe.answered) offered_[placement] = probe.versions;
  }
  auto own = own_probes(probes, runners_);
  for (const auto& name : discovered) {
    const auto& runner = runners_.at(name);
    if (offered_.contains({name, runner.own_environment})) continue;
    own.erase(name);
    const bool elsewhere =
        std::any_of(offered_.begin(), offered_.end(), [&](const auto& entry) { return entry.first.runner == name; });
    log::info(
        "runner {} ({}) {}: its --version failed in its own environment {}, so its framework does not import "
        "there",
        name, runner.program.string(), elsewhere ? "runs only in the environments it names" : "not registered",
        runner.own_environment);
    if (!elsewhere) runners_.erase(name);
  }
  for (const auto& [placement, versions] : offered_) {
    if (!placement.environment.empty())
      log::info("runner {} runs in environment {}", placement.runner, placement.environment);
  }
  capabilities_ = detect_capabilities(own);
  capabilities_["environments"] = environment_capabilities(probes, runners_, environments_);
  if (capabilities_.at("gpus").empty()) {
    nvml_unavailable_ = "this agent has no GPU";
  } else {
    try {
      nvml_ = std::make_shared<const Nvml>(options_.nvml_library);
    } catch (const NvmlUnavailable& error) {
      nvml_unavailable_ = error.what();
      log::warn("no GPU telemetry in this agent's results: {}", nvml_unavailable_);
    }
  }
  try {
    powercap_.emplace(options_.powercap_root);
  } catch (const PowercapUnavailable& error) {
    powercap_unavailable_ = error.what();
    log::info("no CPU energy in this agent's CPU results: {}", powercap_unavailable_);
  }
  measure_peak(options_.peak_probe);
  spool_.emplace(options_.work_directory / "spool");
  kill_leftover_runners();
}

void Agent::measure_peak(PeakProbe mode) {
  const auto worker = runners_.find("libtorch");
  capabilities_["peak_flops"] = peak_flops(mode, worker == runners_.end() ? "" : worker->second.program.string(),
                                           options_.work_directory / "peak_flops.json", capabilities_);
}

void Agent::kill_leftover_runners() {
  const auto folder = options_.work_directory / "runners";
  std::filesystem::create_directories(folder);
  std::size_t killed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    killed += ProcessTree::kill_recorded(entry.path());
    std::filesystem::remove(entry.path());
  }
  if (killed > 0) log::warn("killed {} runner processes a previous life of this agent left running", killed);
}

void Agent::start() { asio::co_spawn(io_, run(), rethrow_from_run("the agent's connection loop")); }

void Agent::stop() {
  stopped_ = true;
  backoff_timer_.cancel();
  fence_timer_.cancel();
  if (connection_) connection_->stop();
}

asio::awaitable<void> Agent::run() {
  auto backoff = options_.initial_backoff;
  auto trying_since = std::chrono::steady_clock::now();  // to register
  while (!stopped_ && !refused_) {
    bool welcomed = false;
    try {
      auto connection = co_await wire::dial(options_.coordinator, options_.tls.get(), std::chrono::seconds(10));
      // Only a session the coordinator welcomed resets the backoff: one
      // refused at its TLS or hello stage must not be retried in a loop.
      co_await session(std::move(connection), [&] {
        backoff = options_.initial_backoff;
        welcomed = true;
      });
    } catch (const std::exception& error) {
      const auto trying = std::chrono::steady_clock::now() - trying_since;
      if (!stopped_ && !welcomed && trying >= options_.join_error_after) {
        log::error("agent {} has not registered with coordinator {} for {:.0f} s (its last attempt: {}); still trying",
                   options_.name, options_.coordinator.text(), std::chrono::duration<double>(trying).count(),
                   error.what());
      } else if (!stopped_) {
        log::warn("coordinator {}: {}", options_.coordinator.text(), error.what());
      }
    }
    if (welcomed) trying_since = std::chrono::steady_clock::now();  // the session ended: registering anew
    if (refused_ && on_refused_) on_refused_();
    if (stopped_ || refused_) break;
    if (welcomed && fence_after_ && !running_.empty()) {  // cut off just now: the clock starts
      fence_timer_.expires_after(*fence_after_);
      asio::co_spawn(io_, fence(), rethrow_from_run("the agent's fence"));
    }
    log::info("reconnecting in {} ms", backoff.count());
    backoff_timer_.expires_after(backoff);
    boost::system::error_code ignored;
    co_await backoff_timer_.async_wait(asio::redirect_error(use_awaitable, ignored));
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

asio::awaitable<void> Agent::session(std::shared_ptr<wire::Connection> connection, std::function<void()> on_welcome) {
  connection_ = connection;  // so that stop() reaches it during the handshake
  // Model lists by digest: sent only if the coordinator asks (shared/model_lists.hpp).
  auto capabilities = capabilities_;
  const auto lists = model_lists::replace_by_digests(capabilities);
  nlohmann::json hello{{"role", "agent"},
                       {"name", options_.name},
                       {"version", std::string(version::number())},
                       {"capabilities", std::move(capabilities)}};
  if (!options_.labels.empty()) hello["labels"] = options_.labels;
  hello["running"] = nlohmann::json::array();
  for (const auto& [job_id, job] : running_) {
    hello["running"].push_back({{"job_id", job_id}, {"attempt", job.attempt}, {"gpus", job.gpus}});
  }
  const auto welcome = co_await wire::peer_handshake(*connection, hello, options_.token, std::chrono::seconds(10));
  if (wire::validate_message(welcome) == "error") {
    log::error("coordinator refused this agent: {}", welcome.at("reason").get<std::string>());
    refused_ = welcome.value("fatal", false);
    connection->stop();
    co_return;
  }
  if (welcome.contains("send_lists")) {
    nlohmann::json asked = nlohmann::json::object();
    for (const auto& digest : welcome.at("send_lists")) {
      if (const auto list = lists.find(digest.get<std::string>()); list != lists.end())
        asked[list->first] = list->second;
    }
    log::info("sending the coordinator {} model lists it lacks", asked.size());
    connection->send(wire::make_message("lists", {{"lists", asked}}));
  }
  const auto interval = milliseconds_from_seconds(welcome.at("heartbeat_interval_s").get<double>());
  log::info("connected to coordinator {} as {}", connection->peer(), options_.name);
  connection->keep_alive(interval);
  fence_timer_.cancel();
  if (welcome.contains("reattach_grace_s")) {
    fence_after_ = milliseconds_from_seconds(welcome.at("reattach_grace_s").get<double>() / 2);
  }
  on_welcome();
  // Outcomes the previous coordinator session never acknowledged.
  for (const auto& [file, outcome] : spool_->unacknowledged()) connection->send(outcome);
  asio::co_spawn(io_, heartbeats(connection, interval), rethrow_from_run("the agent's heartbeats"));
  try {
    while (!connection->stopped()) {
      // The coordinator sends a heartbeat every interval: silence is a partition.
      const auto message = co_await wire::receive_within(*connection, 3 * interval);
      on_message(wire::validate_message(message), message);
    }
  } catch (...) {
    if (connection_ == connection) connection_.reset();
    throw;
  }
  if (connection_ == connection) connection_.reset();
}

void Agent::on_message(const std::string& type, const nlohmann::json& message) {
  if (type == "assign") {
    accept(message);
  } else if (type == "cancel") {
    const auto job = running_.find(message.value("job", ""));
    if (job != running_.end() && message.value("attempt", job->second.attempt) == job->second.attempt) {
      log::info("cancelling job {}", job->first);
      *job->second.cancel_requested = true;
    }
  } else if (type == "result_ack") {
    // Superseded: the coordinator had given up on this attempt; kept, never stored.
    spool_->acknowledge(message.at("job_id"), message.at("attempt"), message.value("superseded", false));
  } else if (type == "heartbeat") {
    return;  // its arrival was the point
  } else if (type == "error") {
    log::warn("coordinator says: {}", message.at("reason").get<std::string>());
  } else {
    log::warn("ignoring an unexpected '{}' message from the coordinator", type);
  }
}

Agent::RunningJob Agent::RunningJob::of(const nlohmann::json& assign) {
  RunningJob job;
  job.attempt = assign.at("attempt").get<int64_t>();
  job.gpus = assign.at("gpus").get<std::vector<int64_t>>();
  job.cpu = !job_fields::get<std::string>(assign.at("job"), "device").starts_with("cuda");
  job.exclusive = assign.value("exclusive", false);
  return job;
}

std::optional<std::string> Agent::conflict(const std::string& job_id, const RunningJob& candidate) {
  if (const auto same = running_.find(job_id); same != running_.end()) {
    if (same->second.attempt < candidate.attempt && !*same->second.cancel_requested) {
      log::info("job {} attempt {} is superseded by attempt {}; stopping it", job_id, same->second.attempt,
                candidate.attempt);
      *same->second.cancel_requested = true;
    }
    return fmt::format("attempt {} of this job is still running here", same->second.attempt);
  }
  for (const auto& [other_id, other] : running_) {
    if (candidate.exclusive || other.exclusive) {
      return "job " + other_id + " runs here and one of the two needs the node alone";
    }
    if (candidate.cpu && other.cpu) return "CPU job " + other_id + " runs here";
    for (const auto gpu : candidate.gpus) {
      if (std::find(other.gpus.begin(), other.gpus.end(), gpu) != other.gpus.end())
        return fmt::format("GPU {} is in use by job {}", gpu, other_id);
    }
  }
  return std::nullopt;
}

void Agent::accept(const nlohmann::json& assign) {
  const auto job_id = assign.at("job_id").get<std::string>();
  const auto attempt = assign.at("attempt").get<int64_t>();
  auto candidate = RunningJob::of(assign);
  if (const auto why = conflict(job_id, candidate)) {
    log::warn("job {} attempt {}: refusing it: {}", job_id, attempt, *why);
    send(wire::make_message("job_refused", {{"job_id", job_id}, {"attempt", attempt}, {"reason", *why}}));
    return;
  }
  const auto runner_name = assign.at("runner").get<std::string>();
  const auto runner = runners_.find(runner_name);
  if (runner == runners_.end()) {
    deliver(wire::make_message("job_failed", {{"job_id", job_id},
                                              {"attempt", attempt},
                                              {"kind", "launch_failed"},
                                              {"retryable", false},
                                              {"reason", "runner '" + runner_name + "' is not registered on agent " +
                                                             options_.name + " (--runner NAME=PATH)"}}));
    return;
  }
  const auto requested = job_fields::get<nlohmann::json>(assign.at("job"), "env");
  Placement placement{runner_name, requested.is_null() ? runner->second.own_environment : requested.get<std::string>()};
  // A Python runner without an environment of its own (an operator's --python-runner) runs only where a job says.
  const bool needs_environment = runner->second.python && placement.environment.empty();
  if ((!requested.is_null() || needs_environment) && !offered_.contains(placement)) {
    std::string offered;
    for (const auto& [where, versions] : offered_) {
      if (where.runner == runner_name && !where.environment.empty())
        offered += (offered.empty() ? "" : ", ") + where.environment;
    }
    deliver(wire::make_message("job_failed",
                               {{"job_id", job_id},
                                {"attempt", attempt},
                                {"kind", "invalid_job"},
                                {"retryable", false},
                                {"reason", "env: runner '" + runner_name + "' does not run in environment '" +
                                               placement.environment + "' on agent " + options_.name +
                                               " (it runs in: " + (offered.empty() ? "none" : offered) + ")"}}));
    return;
  }
  auto resolved = assign;
  try {
    // Resolved once, here: the runner derives nothing (shared/job_resolution.hpp).
    resolved["job"] = job_resolution::resolve(
        with_model_commit(
            with_model_root(with_data_path(assign.at("job"), options_.data_roots), options_.model_roots),
            options_.work_directory / "model-commits"),
        {runner_name, job_resolution::cores_available()});
  } catch (const InvalidInput& error) {
    log::warn("job {} attempt {}: {}", job_id, attempt, error.what());
    deliver(wire::make_message("job_failed", {{"job_id", job_id},
                                              {"attempt", attempt},
                                              {"kind", "invalid_job"},
                                              {"retryable", false},
                                              {"reason", std::string(error.what()) + " on agent " + options_.name}}));
    return;
  }
  if (peak_check_ == PeakCheck::stale && running_.empty() && options_.peak_probe != PeakProbe::off) {
    // Idle: nothing of this agent's competes with the probe.
    log::warn("measuring the devices' peak again: a result's FLOP rate exceeded it");
    measure_peak(PeakProbe::fresh);
    peak_check_ = PeakCheck::remeasured;
  }
  running_[job_id] = std::move(candidate);
  send(wire::make_message("job_accepted", {{"job_id", job_id}, {"attempt", attempt}}));
  log::info("job {} attempt {}: starting runner {}{}", job_id, attempt, runner_name,
            placement.environment.empty() ? "" : " in environment " + placement.environment);
  // An outcome that cannot be spooled must not vanish: the agent stops.
  asio::co_spawn(io_, run_job(std::move(resolved), std::move(placement)),
                 rethrow_from_run(fmt::format("job {} attempt {}", job_id, attempt)));
}

asio::awaitable<void> Agent::run_job(nlohmann::json assign, Placement placement) {
  const auto job_id = assign.at("job_id").get<std::string>();
  const auto attempt = assign.at("attempt").get<int64_t>();
  ExecutionRequest request;
  // The environment's build of a program of its own; a Python runner after the environment's interpreter.
  start_with(request, runner_command(placement, runners_, environments_));
  request.job = assign.at("job");
  request.directory = options_.work_directory / file_name_of(job_id, attempt);
  request.timeout = milliseconds_from_seconds(assign.at("timeout_s").get<double>());
  request.cancel_requested = running_.at(job_id).cancel_requested;
  request.record_file = options_.work_directory / "runners" / (file_name_of(job_id, attempt) + ".json");
  if (const auto gpus = assign.at("gpus").get<std::vector<int64_t>>(); !gpus.empty()) {
    request.environment["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    request.environment["CUDA_VISIBLE_DEVICES"] = visible_devices(capabilities_.at("gpus"), gpus);
  }
  if (needs_rank_launch(request.job)) {
    request.launcher = mpirun_command(request.job, options_.rank_launch, forwarded_to_ranks(request.environment));
  }
  const auto on_gpus = !assign.at("gpus").empty();
  const auto meters = std::make_shared<JobMeters>(
      JobMeters{telemetry_for(assign.at("gpus").get<std::vector<int64_t>>()),
                on_gpus ? EnergyMeter::absent("a GPU job's energy is its GPUs'") : cpu_energy_meter(),
                {}});
  request.on_progress = [this, job_id, attempt, meters](const nlohmann::json& line) {
    if (auto fields = progress_fields(line)) {
      meters->window.epoch_finished(TimedWindow::Clock::now(), fields->at("seconds").get<double>());
      (*fields)["job_id"] = job_id;
      (*fields)["attempt"] = attempt;
      send(wire::make_message("progress", *fields));
    }
  };
  if (meters->telemetry.available() || meters->cpu_energy.available())
    asio::co_spawn(io_, sample(meters), rethrow_from_run("the GPU telemetry and energy"));
  const auto directory = request.directory;
  const MachineWindow machine;
  auto outcome = co_await execute(std::move(request));
  meters->running = false;
  const auto& telemetry = meters->telemetry;
  if (outcome.result && !placement.environment.empty()) {
    const auto python = environments_.find(placement.environment);
    const auto versions = offered_.find(placement);
    (*outcome.result)["context"]["env"] = {
        {"name", placement.environment},
        {"python", python == environments_.end() ? nlohmann::json(nullptr) : nlohmann::json(python->second.string())},
        {"versions", versions == offered_.end() ? nlohmann::json::object() : versions->second}};
  }
  if (outcome.result) {
    const auto window = meters->window.bounds();
    (*outcome.result)["telemetry"] = telemetry.summary(window);
    (*outcome.result)["energy"] = on_gpus ? telemetry.energy(window) : meters->cpu_energy.section(window);
    // The driver's version as NVML gives it (580.65.06); a runner can only read the CUDA driver API's (13.0).
    if (telemetry.available()) (*outcome.result)["context"]["gpu_driver"] = nvml_->driver_version();
    (*outcome.result)["context"]["condition"] = machine.finish(outcome.result->at("telemetry"));
  }
  // Off the books only once the outcome is in the spool.
  if (outcome.kind == ExecutionOutcome::Kind::completed &&
      job_fields::get<bool>(assign.at("job"), "discard_if_throttled") &&
      outcome.result->at("telemetry").value("throttled", false)) {
    // Discarded: the result goes nowhere, not even beside the failure,
    // where the store would keep it; the reason says what NVML saw.
    outcome.kind = ExecutionOutcome::Kind::throttled;
    outcome.reason = "a GPU throttled during the timed epochs and the job asks discard_if_throttled:";
    for (const auto& gpu : outcome.result->at("telemetry").at("gpus")) {
      if (gpu.at("throttled").get<bool>())
        outcome.reason += " GPU " + gpu.at("index").dump() + " (" + gpu.at("uuid").get<std::string>() + ") " +
                          gpu.at("clock_event_reasons").dump();
    }
    outcome.result.reset();
  }
  if (outcome.kind == ExecutionOutcome::Kind::completed &&
      job_fields::get<bool>(assign.at("job"), "require_quiet_machine") &&
      outcome.result->at("context").at("condition").at("busy").get<bool>()) {
    // Discarded like a throttled run: the reasons say what was past its limit.
    outcome.kind = ExecutionOutcome::Kind::busy_machine;
    outcome.reason = "the node was busy during the run and the job asks require_quiet_machine:";
    for (const auto& reason : outcome.result->at("context").at("condition").at("busy_reasons"))
      outcome.reason += " " + reason.get<std::string>() + ";";
    outcome.reason.pop_back();
    outcome.result.reset();
  }
  if (outcome.kind == ExecutionOutcome::Kind::completed) {
    auto result = *outcome.result;
    summarize_trace(result, directory);
    if (lacks_counted_flops(result)) co_await count_flops(result, assign.at("job"), placement, directory);
    judge(result, {capabilities_.at("peak_flops"), assign.at("gpus").get<std::vector<int64_t>>(),
                   nlohmann::json(options_.price_per_hour), outcome.seconds});
    if (peak_check_ == PeakCheck::trusted &&
        result.value(nlohmann::json::json_pointer("/efficiency/peak_below_achieved"), nlohmann::json()) == true) {
      log::warn(
          "job {} attempt {}: its FLOP rate exceeded the measured peak (mfu {}); the peak is measured again "
          "before the next job",
          job_id, attempt, result.at("efficiency").at("mfu").dump());
      peak_check_ = PeakCheck::stale;
    }
    auto message = wire::make_message(
        "job_result", {{"job_id", job_id}, {"attempt", attempt}, {"result", result}, {"seconds", outcome.seconds}});
    attach_trace(message, directory);
    deliver(message);
    running_.erase(job_id);
    if (!options_.keep_job_directories) std::filesystem::remove_all(directory);
    co_return;
  }
  nlohmann::json failed{{"job_id", job_id},
                        {"attempt", attempt},
                        {"kind", to_string(outcome.kind)},
                        {"reason", outcome.reason},
                        {"retryable", outcome.retryable()},
                        {"stdout_tail", outcome.stdout_tail},
                        {"stderr_tail", outcome.stderr_tail},
                        {"seconds", outcome.seconds}};
  if (outcome.result) {
    // Not judged (its run did not finish well), but summarized: the store keeps failed results too.
    failed["result"] = *outcome.result;
    failed["result"]["summary"] = summary_of(*outcome.result);
  }
  if (outcome.exit_code) failed["exit_code"] = *outcome.exit_code;
  if (outcome.signal) failed["signal"] = *outcome.signal;
  log::info("job {} attempt {}: {} (files kept in {})", job_id, attempt, outcome.reason, directory.string());
  deliver(wire::make_message("job_failed", failed));
  running_.erase(job_id);
}

asio::awaitable<void> Agent::count_flops(nlohmann::json& result, const nlohmann::json& job, const Placement& placement,
                                         const std::filesystem::path& directory) {
  const auto& counter = runners_.at(placement.runner).flops_counted_by;
  if (counter.empty()) co_return;
  const Placement counting{counter, placement.environment};
  const auto counted_by = counter + " in environment " + placement.environment;
  if (!offered_.contains(counting)) {
    result["warnings"].push_back("FLOPs not counted, so no efficiency: no " + counted_by + " on agent " +
                                 options_.name);
    co_return;
  }
  auto counted_job = job;
  counted_job["runner"] = counter;
  auto count = co_await flop_counts_.count(std::move(counted_job), runner_command(counting, runners_, environments_),
                                           counted_by, directory / "flops");
  if (count.counted) {
    result["execution"]["counted_flops"] = std::move(*count.counted);
  } else {
    result["warnings"].push_back("FLOPs not counted, so no efficiency: " + count.problem);
  }
}

GpuTelemetry Agent::telemetry_for(const std::vector<int64_t>& gpus) const {
  if (gpus.empty()) return GpuTelemetry::unavailable("the job ran on no GPU");
  if (!nvml_) return GpuTelemetry::unavailable(nvml_unavailable_);
  nlohmann::json entries = nlohmann::json::array();
  for (const auto index : gpus) {
    for (const auto& gpu : capabilities_.at("gpus"))
      if (gpu.at("index") == index) entries.push_back(gpu);
  }
  try {
    // The agent gives a GPU to one job at a time, so its processes there are
    // the job's: the runner, mpirun's ranks, a DataLoader's workers.
    return GpuTelemetry(nvml_, entries,
                        [agent = ::getpid()](pid_t pid) { return ProcessTree::descends_from(pid, agent); });
  } catch (const NvmlUnavailable& error) {
    return GpuTelemetry::unavailable(error.what());
  }
}

EnergyMeter Agent::cpu_energy_meter() const {
  if (!powercap_) return EnergyMeter::absent(powercap_unavailable_);
  return EnergyMeter("rapl", powercap_->domains());
}

asio::awaitable<void> Agent::sample(std::shared_ptr<JobMeters> meters) {
  asio::steady_timer timer(io_);
  while (meters->running) {
    const auto now = TimedWindow::Clock::now();
    meters->telemetry.sample(now);
    if (meters->cpu_energy.available()) meters->cpu_energy.record(now, powercap_->read());
    timer.expires_after(options_.telemetry_interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
  }
}

asio::awaitable<void> Agent::fence() {
  boost::system::error_code cancelled;
  co_await fence_timer_.async_wait(asio::redirect_error(use_awaitable, cancelled));
  if (cancelled || stopped_ || connection_) co_return;  // connected again in time
  for (const auto& [job_id, job] : running_) {
    if (*job.cancel_requested) continue;
    log::warn("job {} attempt {}: no coordinator for {} ms; stopping it, since the coordinator queues it again", job_id,
              job.attempt, fence_after_->count());
    *job.cancel_requested = true;
  }
}

void Agent::deliver(const nlohmann::json& outcome) {
  spool_->keep(outcome);
  send(outcome);
}

void Agent::send(const nlohmann::json& message) {
  if (connection_ && !connection_->stopped()) connection_->send(message);
}

asio::awaitable<void> Agent::heartbeats(std::shared_ptr<wire::Connection> connection,
                                        std::chrono::milliseconds interval) {
  asio::steady_timer timer(io_);
  while (!connection->stopped()) {
    nlohmann::json running = nlohmann::json::array();
    for (const auto& [job_id, job] : running_) running.push_back({{"job_id", job_id}, {"attempt", job.attempt}});
    connection->send(wire::make_message("heartbeat", {{"running", running}}));
    timer.expires_after(interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
  }
}

}  // namespace ts::agent
