#include "coordinator/coordinator.hpp"

#include <format>
#include <random>

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/timestamp.hpp"
#include "shared/version.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using asio::use_awaitable;
using Clock = std::chrono::steady_clock;

namespace {

// cpu-quick-20261130T071500Z-3f2a: readable, sortable, unique enough that
// two submissions in the same second do not collide.
std::string new_sweep_id(const std::string& name) {
  auto stamp = utc_timestamp();  // 2026-11-30T07:15:00.123Z
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  stamp = stamp.substr(0, 15) + "Z";
  std::random_device entropy;
  return std::format("{}-{}-{:04x}", name, stamp, entropy() & 0xffffu);
}

}  // namespace

Coordinator::Coordinator(asio::io_context& io, CoordinatorOptions options, store::Store& store)
    : io_(io), options_(std::move(options)), store_(store), batch_(io, store.database()), acceptor_(io) {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(options_.listen.host), options_.listen.port);
  if (!options_.token && !endpoint.address().is_loopback()) {
    throw InvalidInput("--listen", "listening on " + options_.listen.text() +
                                       " needs a token (--token-file or TORCHSWEEP_TOKEN): without one, only a "
                                       "loopback address is allowed");
  }
  if (!options_.token) {
    log::warn(
        "NO AUTHENTICATION: no token is set, so any local process can submit, cancel, read and report; "
        "set --token-file or TORCHSWEEP_TOKEN (docs/security.md)");
  }
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
  if (options_.resume_unfinished) resume_unfinished();
}

std::uint16_t Coordinator::port() const { return acceptor_.local_endpoint().port(); }

void Coordinator::start() {
  log::info("listening on {}:{}", options_.listen.host, port());
  asio::co_spawn(io_, accept_loop(), asio::detached);
  asio::co_spawn(io_, housekeeping(), asio::detached);
}

asio::awaitable<void> Coordinator::housekeeping() {
  asio::steady_timer timer(io_);
  while (!stopped_) {
    timer.expires_after(options_.heartbeat_interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
    std::vector<std::string> expired;
    for (const auto& [job_id, job] : active_) {
      if (job.detached_until && *job.detached_until <= Clock::now()) expired.push_back(job_id);
    }
    if (!expired.empty()) batch_.open();
    for (const auto& job_id : expired) {
      auto& job = active_.at(job_id);
      job.detached_until.reset();
      attempt_failed(job_id, "agent " + job.agent + " did not come back to report the attempt", true);
    }
    if (!expired.empty()) dispatch();
  }
}

void Coordinator::reattach(const std::string& agent, const nlohmann::json& running) {
  for (const auto& entry : running) {
    const auto job_id = entry.at("job_id").get<std::string>();
    const auto attempt = entry.at("attempt").get<int64_t>();
    const auto job = active_.find(job_id);
    const auto gpus = entry.value("gpus", std::vector<int64_t>{});
    if (job != active_.end() && job->second.detached_until && job->second.agent == agent &&
        job->second.attempt == attempt && scheduler_.attach(job_id, agent, gpus)) {
      job->second.detached_until.reset();
      log::info("job {} attempt {} re-attached to agent {}", job_id, attempt, agent);
      continue;
    }
    // No longer this agent's to run: stop it before it perturbs what comes next.
    agents_.at(agent).connection->send(wire::make_message("cancel", {{"job", job_id}, {"attempt", attempt}}));
  }
}

void Coordinator::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& connection : connections_) connection->stop();
}

// ---- sweeps and jobs -------------------------------------------------------

void Coordinator::enqueue(const store::StoredJob& job, const SweepSettings& settings, bool detached) {
  SchedulableJob schedulable;
  schedulable.job_id = job.job_id;
  schedulable.sweep_id = job.sweep_id;
  schedulable.config_key = job.config_key;
  schedulable.runner = job.runner;
  schedulable.priority = settings.priority;
  schedulable.sweep_sequence = settings.sequence;
  schedulable.ordinal = job.ordinal;
  schedulable.gpus = job.gpus;
  if (const auto hosts = job.document.find("hosts"); hosts != job.document.end() && !hosts->empty()) {
    // A multi-node job reserves the launching agent's share of its GPUs;
    // its other hosts are the sweep's to keep free (docs/multi-gpu.md).
    const auto nodes = static_cast<int64_t>(hosts->size());
    schedulable.gpus = (job.gpus + nodes - 1) / nodes;
  }
  schedulable.uses_gpus = job.document.value("device", "cpu").starts_with("cuda");
  schedulable.node_exclusive = settings.node_exclusive;
  schedulable.pinned = settings.pinned;
  schedulable.requirements = settings.requirements;
  schedulable.attempts = job.attempts;
  std::optional<Clock::time_point> detached_until;
  if (detached) {
    detached_until = Clock::now() + options_.reattach_grace;
    scheduler_.hold(std::move(schedulable));
  } else {
    scheduler_.enqueue(std::move(schedulable));
  }
  active_[job.job_id] =
      ActiveJob{job.sweep_id, job.runner,       job.document,
                job.attempts, job.max_attempts, job.document.value("timeout_s", options_.default_job_timeout_s),
                job.agent,    detached_until};
}

void Coordinator::resume_unfinished() {
  std::map<std::string, SweepSettings> settings;
  for (const auto& summary : store_.sweeps("", /*recent_finished=*/0)) {
    const auto& spec = summary.spec;
    settings[summary.sweep_id] = {summary.sequence, spec.value("priority", int64_t{0}),
                                  spec.value("node_exclusive", true), spec.value("placement", "spread") == "pinned",
                                  Requirements::from_json(spec.value("requirements", nlohmann::json::object()))};
  }
  std::size_t resumed = 0;
  for (const auto& job : store_.unfinished_jobs()) {
    // A running job may still be running: its agent gets a grace period to
    // come back and say so (docs/scheduling.md).
    enqueue(job, settings.at(job.sweep_id), job.state == "running" && !job.agent.empty());
    ++resumed;
  }
  if (resumed > 0) log::info("resumed {} unfinished jobs of {} sweeps", resumed, settings.size());
}

Submission Coordinator::submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter) {
  const auto sweep = sweep::expand(spec, origin);
  batch_.open();
  store::SweepRecord record{new_sweep_id(sweep.name), sweep.name,     spec, sweep.tags, submitter,
                            sweep.priority,           utc_timestamp()};
  std::vector<store::JobRecord> jobs;
  jobs.reserve(sweep.jobs.size());
  for (const auto& planned : sweep.jobs) {
    auto document = planned.document;
    const auto job_id = std::format("{}/{:04}", record.sweep_id, planned.ordinal);
    document["job_id"] = job_id;
    jobs.push_back({job_id, planned.ordinal, planned.config_key, planned.repeat, document.value("runner", "libtorch"),
                    document.value("gpus", int64_t{1}), document, sweep.max_attempts});
  }
  store_.add_sweep(record, jobs);
  const auto stored = store_.sweeps(record.sweep_id).at(0);
  const SweepSettings settings{stored.sequence, sweep.priority, sweep.node_exclusive, sweep.placement == "pinned",
                               Requirements::from_json(sweep.requirements)};
  for (const auto& job : jobs) {
    enqueue({job.job_id, record.sweep_id, job.config_key, job.runner, "queued", "", job.ordinal, job.repeat, job.gpus,
             0, job.max_attempts, job.document},
            settings);
  }
  log::info("sweep {} submitted: {} jobs ({} configurations x {} repeats)", record.sweep_id, jobs.size(),
            sweep.configurations, sweep.repeats);
  dispatch();
  return {record.sweep_id, sweep.name, jobs.size(), sweep.configurations};
}

std::size_t Coordinator::cancel(const std::string& sweep, const std::string& job) {
  batch_.open();
  const auto sweep_id = sweep.empty() ? std::string() : sweep_id_of(sweep);
  if (sweep.empty() && !store_.job(job)) throw InvalidInput("job", "no job with id '" + job + "'");
  const auto cancelled = store_.cancel(sweep_id, job);
  for (const auto& [job_id, state] : cancelled) {
    const auto active = active_.find(job_id);
    if (const auto agent = scheduler_.agent_of(job_id)) {
      // Its resources stay taken until the agent says the process is gone.
      active->second.cancelled = true;
      if (const auto session = agents_.find(*agent); session != agents_.end()) {
        session->second.connection->send(
            wire::make_message("cancel", {{"job", job_id}, {"attempt", active->second.attempt}}));
      }
    } else {
      scheduler_.release(job_id);
      if (active != active_.end()) active_.erase(active);
    }
    notify({JobEvent::Kind::cancelled, sweep_id, job_id, "", "cancelled", 0, 0, 0});
  }
  log::info("cancelled {} jobs", cancelled.size());
  dispatch();
  return cancelled.size();
}

void Coordinator::dispatch() {
  for (const auto& assignment : scheduler_.schedule()) {
    batch_.open();
    auto& job = active_.at(assignment.job_id);
    job.attempt = assignment.attempt;
    job.agent = assignment.agent;
    auto document = job.document;
    document["attempt"] = assignment.attempt;
    store_.job_started(assignment.job_id, assignment.attempt, assignment.agent);
    agents_.at(assignment.agent)
        .connection->send(wire::make_message("assign", {{"job_id", assignment.job_id},
                                                        {"attempt", assignment.attempt},
                                                        {"runner", job.runner},
                                                        {"job", document},
                                                        {"gpus", assignment.gpus},
                                                        {"timeout_s", job.timeout_s}}));
    notify({JobEvent::Kind::started, job.sweep_id, assignment.job_id, assignment.agent, "", assignment.attempt, 0, 0});
  }
}

void Coordinator::notify(JobEvent event) {
  if (observer_) observer_(event);
}

void Coordinator::finish(const std::string& job_id, JobEvent::Kind kind, const std::string& state,
                         const std::string& reason) {
  const auto job = active_.find(job_id);
  if (state != "cancelled") store_.job_finished(job_id, state, reason);
  scheduler_.release(job_id);
  if (job == active_.end()) return;
  notify({kind, job->second.sweep_id, job_id, job->second.agent, reason, job->second.attempt, 0, 0});
  active_.erase(job);
}

void Coordinator::attempt_failed(const std::string& job_id, const std::string& reason, bool retryable) {
  auto& job = active_.at(job_id);
  if (retryable && job.attempt < job.max_attempts) {
    log::warn("job {} attempt {} failed ({}); queued again", job_id, job.attempt, reason);
    store_.job_requeued(job_id, reason);
    scheduler_.requeue(job_id);
    notify({JobEvent::Kind::requeued, job.sweep_id, job_id, job.agent, reason, job.attempt, 0, 0});
    return;
  }
  const auto why = retryable ? std::format("{} (attempt {} of {})", reason, job.attempt, job.max_attempts) : reason;
  log::warn("job {} failed: {}", job_id, why);
  finish(job_id, JobEvent::Kind::failed, "failed", why);
}

void Coordinator::agent_lost(const std::string& name) {
  batch_.open();
  const auto orphans = scheduler_.remove_agent(name);
  agents_.erase(name);
  for (const auto& job_id : orphans) {
    const auto job = active_.find(job_id);
    if (job == active_.end()) continue;
    if (job->second.cancelled) {
      finish(job_id, JobEvent::Kind::cancelled, "cancelled", "cancelled");
      continue;
    }
    // Held for the agent: it may only have lost its connection.
    job->second.detached_until = Clock::now() + options_.reattach_grace;
  }
  dispatch();
}

Coordinator::ActiveJob* Coordinator::current_attempt(const std::string& agent, const nlohmann::json& message) {
  const auto job_id = message.at("job_id").get<std::string>();
  const auto job = active_.find(job_id);
  const auto attempt = message.at("attempt").get<int64_t>();
  if (job == active_.end() || job->second.attempt != attempt || job->second.agent != agent) return nullptr;
  if (scheduler_.agent_of(job_id) != agent && !job->second.detached_until) return nullptr;
  return &job->second;
}

void Coordinator::handle_agent_message(const std::string& agent, const std::string& type,
                                       const nlohmann::json& message) {
  auto& session = agents_.at(agent);
  batch_.open();
  if (type == "heartbeat") {
    session.reported_running = message.value("running", std::vector<std::string>{});
    // A job the agent still runs but that is no longer its to run (requeued
    // while the agent was away, or cancelled) must not perturb the next one.
    for (const auto& job_id : session.reported_running) {
      if (scheduler_.agent_of(job_id) != agent)
        session.connection->send(wire::make_message("cancel", {{"job", job_id}}));
    }
    return;
  }
  if (type == "job_accepted") return;
  if (type == "progress") {
    if (const auto* job = current_attempt(agent, message)) {
      notify({JobEvent::Kind::progress, job->sweep_id, message.at("job_id"), agent, "", job->attempt,
              message.at("epoch").get<int64_t>(), message.at("epochs").get<int64_t>()});
    }
    return;
  }
  if (type != "job_result" && type != "job_failed") {
    session.connection->send(wire::make_error("unexpected message type '" + type + "' from an agent", "type"));
    return;
  }
  const auto job_id = message.at("job_id").get<std::string>();
  const auto ack = wire::make_message("result_ack", {{"job_id", job_id}, {"attempt", message.at("attempt")}});
  auto* job = current_attempt(agent, message);
  if (job == nullptr) {
    // Redelivered after it was stored, or an attempt superseded while its
    // agent was away: acknowledged so the agent forgets it, stored once.
    log::info("agent {}: ignoring a stale outcome of {} attempt {}", agent, job_id, message.at("attempt").dump());
    batch_.after_commit([connection = session.connection, ack] { connection->send(ack); });
    return;
  }
  const auto claims_this_attempt = [&](const nlohmann::json& result) {
    const auto claimed = result.value("job", nlohmann::json::object());
    return claimed.value("job_id", "") == job_id && claimed.value("attempt", int64_t{1}) == message.at("attempt");
  };
  if (job->cancelled) {
    finish(job_id, JobEvent::Kind::cancelled, "cancelled", "cancelled");
  } else if (type == "job_result" && !claims_this_attempt(message.at("result"))) {
    attempt_failed(job_id, "the runner's result names another job or attempt", false);
  } else if (type == "job_result") {
    try {
      store_.ingest_result(message.at("result"), agent);
      finish(job_id, JobEvent::Kind::done, "done", "");
    } catch (const InvalidInput& error) {
      attempt_failed(job_id, std::string("its result document is invalid: ") + error.what(), false);
    }
  } else {
    if (message.contains("result") && claims_this_attempt(message.at("result"))) {
      try {
        store_.ingest_result(message.at("result"), agent);
      } catch (const InvalidInput& error) {
        log::warn("job {}: not storing an invalid failed result: {}", job_id, error.what());
      }
    }
    auto reason = message.at("reason").get<std::string>();
    if (const auto tail = message.value("stderr_tail", ""); !tail.empty()) {
      reason += "; stderr ends: " + tail.substr(tail.size() > 1024 ? tail.size() - 1024 : 0);
    }
    attempt_failed(job_id, reason, message.at("retryable").get<bool>());
  }
  // The agent forgets its spooled copy on this ack: only once it is stored.
  batch_.after_commit([connection = session.connection, ack] { connection->send(ack); });
  dispatch();
}

// ---- sessions --------------------------------------------------------------

asio::awaitable<void> Coordinator::accept_loop() {
  while (!stopped_) {
    boost::system::error_code error;
    auto socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, error));
    if (error) {
      if (stopped_) break;
      log::warn("accept failed: {}", error.message());
      continue;
    }
    if (connections_.size() >= options_.max_connections) {
      log::warn("refusing a connection: {} connections already open", connections_.size());
      continue;  // the socket closes as it goes out of scope
    }
    asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> Coordinator::serve(asio::ip::tcp::socket socket) {
  std::shared_ptr<wire::Connection> connection;
  if (options_.tls) {
    const auto peer = wire::peer_address(socket);
    try {
      connection = std::make_shared<wire::Connection>(
          co_await wire::tls_accept(std::move(socket), *options_.tls, options_.handshake_timeout), options_.limits);
    } catch (const std::exception& error) {
      log::warn("{}: refused: no TLS handshake: {}", peer, error.what());
      co_return;
    }
  } else {
    connection = std::make_shared<wire::Connection>(std::move(socket), options_.limits);
  }
  connections_.insert(connection);
  connection->start();
  try {
    const auto hello = co_await wire::receive_within(*connection, options_.handshake_timeout);
    const auto type = wire::validate_message(hello);
    if (type != "hello") throw InvalidInput("type", "the first message must be hello, got " + type);
    nlohmann::json welcome{
        {"version", std::string(version::number())},
        {"heartbeat_interval_s", std::chrono::duration<double>(options_.heartbeat_interval).count()}};
    if (options_.token) welcome["proof"] = co_await authenticate(*connection, hello);
    connection->send(wire::make_message("welcome", welcome));
    if (hello.at("role") == "agent") {
      co_await serve_agent(connection, hello);
    } else {
      co_await serve_client(connection);
    }
  } catch (const InvalidInput& error) {
    log::warn("{}: refused: {}", connection->peer(), error.what());
    connection->send_and_close(wire::make_error(error.what(), error.field(), /*fatal=*/true));
  } catch (const wire::FrameError& error) {
    log::warn("{}: closing: {}", connection->peer(), error.what());
    connection->stop();
  } catch (const boost::system::system_error& error) {
    if (error.code() == asio::error::timed_out) log::warn("{}: closing: {}", connection->peer(), "timed out");
    connection->stop();
  } catch (const std::exception& error) {
    // A coroutine root: nothing above it would report this.
    log::error("{}: session failed: {}", connection->peer(), error.what());
    connection->stop();
  }
  connections_.erase(connection);
}

asio::awaitable<std::string> Coordinator::authenticate(wire::Connection& connection, const nlohmann::json& hello) {
  const auto nonce = wire::random_nonce();
  connection.send(wire::make_message("challenge", {{"nonce", nonce}}));
  const auto answer = co_await wire::receive_within(connection, options_.handshake_timeout);
  if (wire::validate_message(answer) != "auth") throw InvalidInput("type", "expected auth after a challenge");
  const auto peer_nonce = answer.at("nonce").get<std::string>();
  const auto expected = wire::peer_mac(*options_.token, nonce, peer_nonce, hello.at("role").get<std::string>(),
                                       hello.at("name").get<std::string>());
  if (!wire::equal_in_constant_time(expected, answer.at("mac").get<std::string>())) {
    log::warn("{}: authentication failed for {} '{}'", connection.peer(), hello.at("role").get<std::string>(),
              hello.at("name").get<std::string>());
    throw InvalidInput("mac", "authentication failed: wrong token");
  }
  co_return wire::coordinator_proof(*options_.token, nonce, peer_nonce);
}

asio::awaitable<void> Coordinator::serve_agent(std::shared_ptr<wire::Connection> connection,
                                               const nlohmann::json& hello) {
  const auto name = hello.at("name").get<std::string>();
  if (auto previous = agents_.find(name); previous != agents_.end()) {
    // The same node reconnected before its old session timed out: its jobs
    // there are treated as lost; the agent's heartbeat lets us cancel them.
    log::info("agent {} reconnected from {}; dropping its previous session", name, connection->peer());
    previous->second.connection->stop();
    agent_lost(name);
  }
  const auto capabilities = hello.value("capabilities", nlohmann::json::object());
  const auto labels = hello.value("labels", nlohmann::json::object());
  agents_[name] = AgentSession{connection, capabilities, labels, Clock::now(), {}};
  batch_.open();
  store_.record_agent(name, capabilities, labels);
  scheduler_.add_agent(AgentResources::from_hello(hello));
  log::info("agent {} connected from {}", name, connection->peer());
  reattach(name, hello.value("running", nlohmann::json::array()));
  dispatch();
  try {
    while (!connection->stopped()) {
      const auto message = co_await wire::receive_within(*connection, 3 * options_.heartbeat_interval);
      handle_agent_message(name, wire::validate_message(message), message);
    }
  } catch (...) {
    const auto found = agents_.find(name);
    if (found != agents_.end() && found->second.connection == connection) {
      log::info("agent {} disconnected", name);
      agent_lost(name);
    }
    throw;
  }
}

asio::awaitable<void> Coordinator::serve_client(std::shared_ptr<wire::Connection> connection) {
  while (!connection->stopped()) {
    const auto request = co_await wire::receive_within(*connection, options_.client_idle_timeout);
    const auto type = wire::validate_message(request);
    try {
      // A submission or cancel is answered once it is committed.
      batch_.after_commit([connection, reply = answer_client(type, request)] { connection->send(reply); });
    } catch (const InvalidInput& error) {
      // A bad request changes nothing and the client may try again.
      connection->send(wire::make_error(error.what(), error.field()));
    }
  }
}

nlohmann::json Coordinator::answer_client(const std::string& type, const nlohmann::json& request) {
  if (type == "status") return status_reply(request.value("sweep", ""));
  if (type == "submit") {
    const auto submitted =
        submit(request.at("sweep"), request.value("origin", "submitted sweep"), request.value("submitter", ""));
    return wire::make_message("submitted", {{"sweep_id", submitted.sweep_id},
                                            {"name", submitted.name},
                                            {"jobs", submitted.jobs},
                                            {"configurations", submitted.configurations}});
  }
  if (type == "cancel") {
    return wire::make_message("cancelled", {{"jobs", cancel(request.value("sweep", ""), request.value("job", ""))}});
  }
  throw InvalidInput("type", "unexpected message type '" + type + "' from a client");
}

std::string Coordinator::sweep_id_of(const std::string& id_or_name) {
  const auto found = store_.resolve_sweep(id_or_name);
  if (!found) throw InvalidInput("sweep", "no sweep with id or name '" + id_or_name + "'");
  return *found;
}

nlohmann::json Coordinator::status_reply(const std::string& sweep) {
  // The sweep asked for, or every active sweep and the last few finished ones.
  constexpr int64_t finished_shown = 10;
  nlohmann::json sweeps = nlohmann::json::array();
  for (const auto& summary : store_.sweeps(sweep.empty() ? std::string() : sweep_id_of(sweep), finished_shown)) {
    sweeps.push_back({{"sweep_id", summary.sweep_id},
                      {"name", summary.name},
                      {"state", summary.state},
                      {"priority", summary.priority},
                      {"created_at", summary.created_at},
                      {"total", summary.total},
                      {"jobs", summary.jobs}});
  }
  nlohmann::json agents = nlohmann::json::array();
  const auto now = Clock::now();
  for (const auto& [name, session] : agents_) {
    const auto& capabilities = session.capabilities;
    agents.push_back({{"name", name},
                      {"address", session.connection->peer()},
                      {"hostname", capabilities.value("hostname", "")},
                      {"cpu_cores", capabilities.value("cpu_cores", 0)},
                      {"gpus", capabilities.contains("gpus") ? capabilities["gpus"].size() : 0},
                      {"labels", session.labels},
                      {"runners", capabilities.value("runners", nlohmann::json::array())},
                      {"connected_s", std::chrono::duration<double>(now - session.connected_at).count()},
                      {"running", scheduler_.running_on(name)}});
  }
  return wire::make_message("status_reply", {{"sweeps", sweeps}, {"agents", agents}});
}

}  // namespace ts::coordinator
