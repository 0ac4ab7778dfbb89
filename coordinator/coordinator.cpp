#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/spawn_checked.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using asio::use_awaitable;
using Clock = std::chrono::steady_clock;

namespace {

std::size_t reader_threads(std::size_t asked) {
  if (asked > 0) return asked;
  const std::size_t cores = std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(cores > 1 ? cores - 1 : 1, 1, 4);
}

}  // namespace

Coordinator::Coordinator(asio::io_context& io, CoordinatorOptions options, store::Store& store)
    : io_(io),
      options_(std::move(options)),
      store_(store),
      batch_(io, store.database()),
      session_settings_{options_.heartbeat_interval, options_.handshake_timeout, options_.client_idle_timeout,
                        options_.jobs.reattach_grace, options_.token},
      registry_(store, batch_, options_.jobs,
                [this](const std::string& agent, const nlohmann::json& message) { agents_.send(agent, message); }),
      requests_(store, batch_, registry_, agents_, joining_),
      acceptor_(io),
      artifacts_(store::ArtifactFiles::beside(store.path())),
      turns_(io, options_.result_turn),
      // options_ keeps the count that runs, for the log line of start().
      readers_(options_.reader_threads = reader_threads(options_.reader_threads)) {
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
  log::info("listening on {}:{} (reader threads: {})", options_.listen.host, port(), options_.reader_threads);
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
    agents_.send_to_all(wire::make_message("heartbeat", {}));
    registry_.expire(Clock::now());
    if (metrics_) refresh_metrics();
  }
}

void Coordinator::refresh_metrics() {
  const auto now = Clock::now();
  std::vector<AgentSample> agents;
  for (const auto& [name, session] : agents_.all()) {
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

void Coordinator::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& session : sessions_) session->stop();
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
    if (sessions_.size() >= options_.max_connections) {
      log::warn("refusing a connection: {} connections already open", sessions_.size());
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
  auto session = std::make_shared<Session>(std::move(connection), session_settings_,
                                           SessionParts{store_, batch_, registry_, agents_, requests_, joining_,
                                                        metrics_.get(), readers_, turns_, artifacts_, lists_asked_});
  sessions_.insert(session);
  // Forgotten when it ends, by a store error too (which ends the coordinator).
  // Not by a guard's destructor: a frame destroyed with the io_context after
  // the coordinator must not touch it.
  try {
    co_await session->run();
  } catch (...) {
    sessions_.erase(session);
    throw;
  }
  sessions_.erase(session);
}

}  // namespace ts::coordinator
