#pragma once
// The coordinator's TCP server: accepts agents and clients, checks their
// hello, keeps the sessions of connected agents (heartbeats both ways),
// turns submitted sweeps into jobs and hands what agents say to the
// JobRegistry, which assigns, reconciles and records.
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "coordinator/job_registry.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/write_batch.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"
#include "store/store.hpp"

namespace ts::coordinator {

namespace asio = boost::asio;

struct CoordinatorOptions {
  wire::Endpoint listen{"127.0.0.1", 7000};
  // Both sides send something this often; a peer silent for 3 is dropped.
  std::chrono::milliseconds heartbeat_interval{2000};
  std::chrono::milliseconds handshake_timeout{5000};  // a peer must say hello this soon
  std::chrono::milliseconds client_idle_timeout{60000};
  // Agent and client sessions at once; each is a file descriptor, so the
  // process's open-files limit must exceed it (`torchsweep coordinator`
  // raises its soft limit to the hard one).
  std::size_t max_connections = 1024;
  bool resume_unfinished = true;  // queue again the unfinished jobs found in the store
  RegistryOptions jobs;           // grace, deadlines, default timeout
  wire::ConnectionLimits limits;
  // The shared token every peer must prove it holds (docs/security.md).
  // Without one the coordinator only listens on a loopback address.
  std::optional<std::string> token;
  // TLS on every connection when set (docs/security.md); peers that do not
  // complete a TLS handshake within handshake_timeout are dropped.
  std::shared_ptr<wire::ssl::context> tls;
  // Prometheus's /metrics on this address when set (docs/operations.md).
  std::optional<wire::Endpoint> metrics_listen;
};

struct Submission {
  std::string sweep_id, name;
  std::size_t jobs = 0, configurations = 0;
  std::vector<std::string> warnings;  // e.g. a runner no agent has reported yet
};

// The coordinator is its sessions (agents and clients over TCP) plus the
// JobRegistry, which owns every job's state. A store error ends run() with
// store::SqliteError: the store is the truth, and a restarted coordinator
// resumes from it (docs/operations.md).
class Coordinator {
 public:
  // Binds at once (so port() is known); accepts after start(). Unfinished
  // sweeps in `store` are resumed: their queued and running jobs are queued.
  Coordinator(asio::io_context& io, CoordinatorOptions options, store::Store& store);
  ~Coordinator();
  std::uint16_t port() const;
  // The port /metrics is served on; 0 without --metrics-listen.
  std::uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  void start();
  // Stops accepting and closes every session; idempotent.
  void stop();

  // Validates, expands and stores a sweep, then queues its jobs. Throws
  // ts::InvalidInput naming `origin` and the field of a bad sweep, or a
  // model no runner runs as the agents that ever registered reported, with
  // `also_known` (capabilities of agents about to connect: `run`'s own).
  Submission submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter,
                    const std::vector<nlohmann::json>& also_known = {});
  // Cancels a sweep (id or name) or a job (id); returns how many jobs stopped.
  std::size_t cancel(const std::string& sweep, const std::string& job);
  // Adds `runs` confirmation runs of each configuration (jobs.config_key)
  // of a sweep (id or name): copies of each one's newest job. Returns the
  // sweep id and the new job ids; an unknown sweep or configuration changes nothing.
  std::pair<std::string, std::vector<std::string>> rerun(const std::string& sweep,
                                                         const std::vector<std::string>& configurations, int64_t runs);
  void on_event(std::function<void(const JobEvent&)> observer) { registry_.on_event(std::move(observer)); }
  nlohmann::json status_reply(const std::string& sweep = "");

 private:
  struct AgentSession {
    std::shared_ptr<wire::Connection> connection;
    nlohmann::json capabilities, labels;
    std::chrono::steady_clock::time_point connected_at, last_heard;
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
  // Every heartbeat interval: a heartbeat to each agent, the registry's
  // deadlines, and the metrics' gauges.
  asio::awaitable<void> housekeeping();
  asio::awaitable<void> loop_lag_probe();  // with metrics only
  void refresh_metrics();
  void handle_agent_message(const std::string& agent, const std::string& type, const nlohmann::json& message);
  void send_to_agent(const std::string& agent, const nlohmann::json& message);

  asio::io_context& io_;
  CoordinatorOptions options_;
  store::Store& store_;
  WriteBatch batch_;
  std::map<std::string, AgentSession> agents_;
  JobRegistry registry_;
  asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<wire::Connection>> connections_;
  std::unique_ptr<Metrics> metrics_;
  bool stopped_ = false;
};

}  // namespace ts::coordinator
