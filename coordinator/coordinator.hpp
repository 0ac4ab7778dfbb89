#pragma once
// The coordinator's TCP server: accepts agents and clients, checks their
// hello, keeps the registry of connected agents (heartbeats watched), turns
// submitted sweeps into jobs, assigns them through the Scheduler, and
// records every change of state and every result in the Store.
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "coordinator/scheduler.hpp"
#include "coordinator/store/store.hpp"
#include "coordinator/write_batch.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"

namespace ts::coordinator {

namespace asio = boost::asio;

struct CoordinatorOptions {
  wire::Endpoint listen{"127.0.0.1", 7000};
  std::chrono::milliseconds heartbeat_interval{2000};  // agents miss 3 and are dropped
  std::chrono::milliseconds handshake_timeout{5000};   // a peer must say hello this soon
  std::chrono::milliseconds client_idle_timeout{60000};
  std::size_t max_connections = 1024;
  double default_job_timeout_s = 3600;  // when a job gives no timeout_s
  bool resume_unfinished = true;        // queue again the unfinished jobs found in the store
  // How long a running job waits for its agent to come back (after a lost
  // connection or a coordinator restart) before it is queued again.
  std::chrono::milliseconds reattach_grace{10000};
  wire::ConnectionLimits limits;
  // The shared token every peer must prove it holds (docs/security.md).
  // Without one the coordinator only listens on a loopback address.
  std::optional<std::string> token;
  // TLS on every connection when set (docs/security.md); peers that do not
  // complete a TLS handshake within handshake_timeout are dropped.
  std::shared_ptr<wire::ssl::context> tls;
};

// What happened to a job, for observers such as `torchsweep run`.
struct JobEvent {
  enum class Kind { started, progress, done, failed, requeued, cancelled };
  Kind kind = Kind::started;
  std::string sweep_id, job_id, agent, detail;
  int64_t attempt = 0, epoch = 0, epochs = 0;
};

struct Submission {
  std::string sweep_id, name;
  std::size_t jobs = 0, configurations = 0;
};

class Coordinator {
 public:
  // Binds at once (so port() is known); accepts after start(). Unfinished
  // sweeps in `store` are resumed: their queued and running jobs are queued.
  Coordinator(asio::io_context& io, CoordinatorOptions options, store::Store& store);
  std::uint16_t port() const;
  void start();
  // Stops accepting and closes every session; idempotent.
  void stop();

  // Validates, expands and stores a sweep, then queues its jobs. Throws
  // ts::InvalidInput naming `origin` and the field of a bad sweep.
  Submission submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter);
  // Cancels a sweep (id or name) or a job (id); returns how many jobs stopped.
  std::size_t cancel(const std::string& sweep, const std::string& job);
  void on_event(std::function<void(const JobEvent&)> observer) { observer_ = std::move(observer); }
  nlohmann::json status_reply(const std::string& sweep = "");

 private:
  struct AgentSession {
    std::shared_ptr<wire::Connection> connection;
    nlohmann::json capabilities, labels;
    std::chrono::steady_clock::time_point connected_at;
    std::vector<std::string> reported_running;
  };
  struct ActiveJob {
    std::string sweep_id, runner;
    nlohmann::json document;
    int64_t attempt = 0, max_attempts = 3;
    double timeout_s = 0;
    std::string agent;
    // Set while the job's agent is away: requeued when this passes.
    std::optional<std::chrono::steady_clock::time_point> detached_until;
    bool cancelled = false;  // cancelled while running; waiting for its agent to confirm
  };
  struct SweepSettings {
    int64_t sequence = 0, priority = 0;
    bool node_exclusive = true, pinned = false;
    Requirements requirements;
  };

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);
  // Challenges a peer for the token; returns the coordinator's proof for the
  // welcome. Throws ts::InvalidInput when the peer's answer is wrong.
  asio::awaitable<std::string> authenticate(wire::Connection& connection, const nlohmann::json& hello);
  asio::awaitable<void> serve_agent(std::shared_ptr<wire::Connection> connection, const nlohmann::json& hello);
  asio::awaitable<void> serve_client(std::shared_ptr<wire::Connection> connection);
  nlohmann::json answer_client(const std::string& type, const nlohmann::json& request);
  // The id of a sweep given by id or name; throws ts::InvalidInput naming it.
  std::string sweep_id_of(const std::string& id_or_name);

  void resume_unfinished();
  // Tracks the job and queues it, or holds it for its agent (`detached`).
  void enqueue(const store::StoredJob& job, const SweepSettings& settings, bool detached = false);
  // Requeues the jobs whose agent did not come back in time, every heartbeat interval.
  asio::awaitable<void> housekeeping();
  void reattach(const std::string& agent, const nlohmann::json& running);
  // Assigns whatever fits now and sends the assignments.
  void dispatch();
  void handle_agent_message(const std::string& agent, const std::string& type, const nlohmann::json& message);
  // The running attempt an agent reports on, or nullptr when it is stale.
  ActiveJob* current_attempt(const std::string& agent, const nlohmann::json& message);
  void finish(const std::string& job_id, JobEvent::Kind kind, const std::string& state, const std::string& reason);
  // An attempt ended without a result: retried while attempts remain.
  void attempt_failed(const std::string& job_id, const std::string& reason, bool retryable);
  void agent_lost(const std::string& name);
  void notify(JobEvent event);

  asio::io_context& io_;
  CoordinatorOptions options_;
  store::Store& store_;
  WriteBatch batch_;
  asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<wire::Connection>> connections_;
  std::map<std::string, AgentSession> agents_;
  std::map<std::string, ActiveJob> active_;
  Scheduler scheduler_;
  std::function<void(const JobEvent&)> observer_;
  bool stopped_ = false;
};

}  // namespace ts::coordinator
