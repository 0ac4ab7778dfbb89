#include "coordinator/coordinator.hpp"

#include <filesystem>
#include <format>
#include <random>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/log.hpp"
#include "shared/seconds.hpp"
#include "shared/spawn_checked.hpp"
#include "shared/sweep/runnable.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/timestamp.hpp"
#include "shared/version.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using asio::use_awaitable;
using Clock = std::chrono::steady_clock;

namespace {

// The current sweeps, for status and the metrics: every active one and the
// last few finished.
constexpr int64_t finished_sweeps_shown = 10;

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
    : io_(io),
      options_(std::move(options)),
      store_(store),
      batch_(io, store.database()),
      registry_(store, batch_, options_.jobs,
                [this](const std::string& agent, const nlohmann::json& message) { send_to_agent(agent, message); }),
      acceptor_(io) {
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
  if (options_.metrics_listen) {
    metrics_ = std::make_unique<Metrics>(*options_.metrics_listen);
    registry_.on_event([metrics = metrics_.get()](const JobEvent& event) { metrics->job_event(event); });
  }
  if (options_.resume_unfinished) registry_.resume_unfinished();
}

Coordinator::~Coordinator() {
  // The last batch commits while the sessions its acknowledgements go to still exist.
  try {
    batch_.commit();
  } catch (const std::exception& error) {
    log::error("store: the last batch of writes could not be committed: {}", error.what());
  }
}

std::uint16_t Coordinator::port() const { return acceptor_.local_endpoint().port(); }

void Coordinator::start() {
  log::info("listening on {}:{}", options_.listen.host, port());
  if (metrics_)
    log::info("serving Prometheus metrics on http://{}:{}/metrics", options_.metrics_listen->host, metrics_port());
  asio::co_spawn(io_, accept_loop(), rethrow_from_run("the coordinator's accept loop"));
  asio::co_spawn(io_, housekeeping(), rethrow_from_run("the coordinator's housekeeping"));
  if (metrics_) asio::co_spawn(io_, loop_lag_probe(), rethrow_from_run("the coordinator's event-loop probe"));
}

asio::awaitable<void> Coordinator::loop_lag_probe() {
  // A timer due every 25 ms: how late it fires is how long the loop was busy elsewhere.
  constexpr auto period = std::chrono::milliseconds(25);
  asio::steady_timer timer(io_);
  while (!stopped_) {
    const auto due = Clock::now() + period;
    timer.expires_at(due);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
    if (stopped_) break;
    metrics_->loop_lag(Clock::now() - due);
  }
}

asio::awaitable<void> Coordinator::housekeeping() {
  asio::steady_timer timer(io_);
  while (!stopped_) {
    timer.expires_after(options_.heartbeat_interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
    if (stopped_) break;
    // Agents read with a deadline of 3 intervals: silence means a partition.
    for (const auto& [name, session] : agents_) session.connection->send(wire::make_message("heartbeat", {}));
    registry_.expire(Clock::now());
    if (metrics_) refresh_metrics();
  }
}

void Coordinator::refresh_metrics() {
  const auto now = Clock::now();
  std::vector<AgentSample> agents;
  for (const auto& [name, session] : agents_) {
    agents.push_back({name, session.labels, std::chrono::duration<double>(now - session.last_heard).count()});
  }
  metrics_->refresh_agents(agents);
  std::map<std::string, std::map<std::string, int64_t>> jobs;
  for (const auto& summary : store_.sweeps("", finished_sweeps_shown)) jobs[summary.sweep_id] = summary.jobs;
  metrics_->refresh_jobs(jobs);
  int64_t bytes = 0;
  for (const auto* suffix : {"", "-wal"}) {
    std::error_code missing;
    const auto size = std::filesystem::file_size(store_.path() + suffix, missing);
    if (!missing) bytes += static_cast<int64_t>(size);
  }
  metrics_->refresh_store_bytes(bytes);
}

void Coordinator::send_to_agent(const std::string& agent, const nlohmann::json& message) {
  if (const auto session = agents_.find(agent); session != agents_.end()) session->second.connection->send(message);
}

void Coordinator::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& connection : connections_) connection->stop();
}

// ---- sweeps and jobs -------------------------------------------------------

Submission Coordinator::submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter,
                               const std::vector<nlohmann::json>& also_known) {
  const auto sweep = sweep::expand(spec, origin);
  // A model no runner of its name runs is refused now, not at 3 a.m.
  auto capabilities = store_.agent_capabilities();
  capabilities.insert(capabilities.end(), also_known.begin(), also_known.end());
  auto warnings =
      sweep::check_runnable(sweep, sweep::known_runners(capabilities), "as the agents that ever registered reported");
  for (const auto& warning : warnings) log::warn("sweep {}: {}", sweep.name, warning);
  batch_.open();
  store::SweepRecord record{new_sweep_id(sweep.name), sweep.name,     spec, sweep.tags, submitter,
                            sweep.priority,           utc_timestamp()};
  std::vector<store::JobRecord> jobs;
  jobs.reserve(sweep.jobs.size());
  for (const auto& planned : sweep.jobs) {
    auto document = planned.document;
    const auto job_id = std::format("{}/{:04}", record.sweep_id, planned.ordinal);
    document["job_id"] = job_id;
    jobs.push_back({job_id, planned.ordinal, planned.config_key, planned.repeat,
                    job_fields::get<std::string>(document, "runner"), job_fields::get<int64_t>(document, "gpus"),
                    document, sweep.max_attempts});
  }
  store_.add_sweep(record, jobs);
  const auto settings = SweepSettings::of(store_.sweeps(record.sweep_id).at(0).sequence, sweep);
  for (const auto& job : jobs) {
    registry_.add({job.job_id, record.sweep_id, job.config_key, job.runner, "queued", "", job.ordinal, job.repeat,
                   job.gpus, 0, job.max_attempts, job.document},
                  settings);
  }
  log::info("sweep {} submitted: {} jobs ({} configurations x {} repeats)", record.sweep_id, jobs.size(),
            sweep.configurations, sweep.repeats);
  registry_.dispatch();
  return {record.sweep_id, sweep.name, jobs.size(), sweep.configurations, std::move(warnings)};
}

std::size_t Coordinator::cancel(const std::string& sweep, const std::string& job) {
  const auto sweep_id = sweep.empty() ? std::string() : sweep_id_of(sweep);
  if (sweep.empty() && !store_.job(job)) throw InvalidInput("job", "no job with id '" + job + "'");
  return registry_.cancel(sweep_id, job);
}

std::pair<std::string, std::vector<std::string>> Coordinator::rerun(const std::string& sweep,
                                                                    const std::vector<std::string>& configurations,
                                                                    int64_t runs) {
  const auto sweep_id = sweep_id_of(sweep);
  const auto summary = store_.sweeps(sweep_id).at(0);
  const auto settings = SweepSettings::of(summary.sequence, sweep::parse(summary.spec, "the stored sweep " + sweep_id));
  // An adaptive sweep's rule would count the reruns as rounds of its pairs.
  if (settings.adaptive) throw InvalidInput("sweep", "sweep " + sweep_id + " is adaptive: its rounds are not rerun");
  std::map<std::string, store::StoredJob> newest;  // configuration key -> its newest job
  int64_t next_ordinal = 0;
  for (auto& job : store_.sweep_jobs(sweep_id)) {
    next_ordinal = std::max(next_ordinal, job.ordinal + 1);
    auto& last = newest[job.config_key];
    if (last.job_id.empty() || job.repeat >= last.repeat) last = std::move(job);
  }
  std::vector<store::JobRecord> added;
  for (std::size_t c = 0; c < configurations.size(); ++c) {
    const auto found = newest.find(configurations[c]);
    if (found == newest.end()) {
      throw InvalidInput("configurations[" + std::to_string(c) + "]",
                         "sweep " + sweep_id + " has no configuration '" + configurations[c] + "'");
    }
    const auto& last = found->second;
    for (int64_t run = 0; run < runs; ++run) {
      auto document = last.document;
      const auto job_id = std::format("{}/{:04}", sweep_id, next_ordinal);
      document["job_id"] = job_id;
      added.push_back({job_id, next_ordinal++, last.config_key, last.repeat + 1 + run, last.runner, last.gpus, document,
                       last.max_attempts, "confirmation"});
    }
  }
  registry_.add_runs(sweep_id, added, settings);
  registry_.dispatch();
  std::vector<std::string> ids;
  for (const auto& job : added) ids.push_back(job.job_id);
  log::info("sweep {}: {} confirmation runs queued", sweep_id, ids.size());
  return {sweep_id, ids};
}

void Coordinator::handle_agent_message(const std::string& agent, const std::string& type,
                                       const nlohmann::json& message) {
  if (type == "heartbeat") {
    registry_.heartbeat(agent, message.value("running", nlohmann::json::array()));
  } else if (type == "job_accepted") {
    return;
  } else if (type == "job_refused") {
    registry_.refused(agent, message);
  } else if (type == "progress") {
    registry_.progress(agent, message);
  } else if (type == "job_result" || type == "job_failed") {
    // The agent forgets its spooled copy on this ack: only once it is stored.
    batch_.after_commit([connection = agents_.at(agent).connection, ack = registry_.outcome(agent, type, message),
                         metrics = metrics_.get(), arrived = Clock::now()] {
      if (metrics) metrics->result_ingested(Clock::now() - arrived);
      connection->send(ack);
    });
  } else {
    agents_.at(agent).connection->send(
        wire::make_error("unexpected message type '" + type + "' from an agent", "type"));
  }
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
    // A session catches its own errors; what escapes (the store failed) ends the coordinator.
    asio::co_spawn(io_, serve(std::move(socket)), rethrow_from_run("an agent or client session"));
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
  connection->keep_alive(options_.heartbeat_interval);
  connection->start();
  try {
    const auto hello = co_await wire::receive_within(*connection, options_.handshake_timeout);
    const auto type = wire::validate_message(hello);
    if (type != "hello") throw InvalidInput("type", "the first message must be hello, got " + type);
    nlohmann::json welcome{{"version", std::string(version::number())},
                           {"heartbeat_interval_s", seconds_of(options_.heartbeat_interval)},
                           {"reattach_grace_s", seconds_of(options_.jobs.reattach_grace)}};
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
  } catch (const store::SqliteError& error) {
    connections_.erase(connection);
    throw;  // the store is the truth: carrying on without it would corrupt it
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
    // The same node reconnected before its old session timed out: what it
    // still runs is reattached from its hello, the rest waits for the grace.
    log::info("agent {} reconnected from {}; dropping its previous session", name, connection->peer());
    previous->second.connection->stop();
    agents_.erase(previous);
    registry_.agent_lost(name);
  }
  const auto capabilities = hello.value("capabilities", nlohmann::json::object());
  const auto labels = hello.value("labels", nlohmann::json::object());
  agents_[name] = AgentSession{connection, capabilities, labels, Clock::now(), Clock::now()};
  batch_.open();
  store_.record_agent(name, capabilities, labels);
  log::info("agent {} connected from {}", name, connection->peer());
  registry_.agent_connected(AgentResources::from_hello(hello), hello.value("running", nlohmann::json::array()));
  try {
    while (!connection->stopped()) {
      const auto message = co_await wire::receive_within(*connection, 3 * options_.heartbeat_interval);
      if (const auto session = agents_.find(name); session != agents_.end()) session->second.last_heard = Clock::now();
      handle_agent_message(name, wire::validate_message(message), message);
    }
  } catch (const store::SqliteError&) {
    throw;
  } catch (...) {
    const auto found = agents_.find(name);
    if (found != agents_.end() && found->second.connection == connection) {
      log::info("agent {} ({}) disconnected", name, connection->peer());
      agents_.erase(found);
      registry_.agent_lost(name);
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
                                            {"configurations", submitted.configurations},
                                            {"warnings", submitted.warnings}});
  }
  if (type == "cancel") {
    return wire::make_message("cancelled", {{"jobs", cancel(request.value("sweep", ""), request.value("job", ""))}});
  }
  if (type == "rerun") {
    const auto [sweep_id, jobs] = rerun(request.at("sweep"), request.at("configurations"), request.at("runs"));
    return wire::make_message("rerun_queued", {{"sweep_id", sweep_id}, {"jobs", jobs}});
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
  nlohmann::json sweeps = nlohmann::json::array();
  for (const auto& summary : store_.sweeps(sweep.empty() ? std::string() : sweep_id_of(sweep), finished_sweeps_shown)) {
    sweeps.push_back({{"sweep_id", summary.sweep_id},
                      {"name", summary.name},
                      {"state", summary.state},
                      {"priority", summary.priority},
                      {"created_at", summary.created_at},
                      {"total", summary.total},
                      {"jobs", summary.jobs}});
    if (auto pairs = store_.adaptive_pairs(summary.sweep_id); !pairs.empty()) sweeps.back()["adaptive"] = pairs;
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
                      {"running", registry_.running_on(name)}});
  }
  return wire::make_message("status_reply", {{"sweeps", sweeps}, {"agents", agents}});
}

}  // namespace ts::coordinator
