#pragma once
// The coordinator's TCP server: accepts agents and clients and gives each a
// Session, sends the agents' heartbeats, and owns the parts the sessions
// reach: the request handlers, the connected agents, the JobRegistry
// (which assigns, reconciles and records) and the store's write batch.
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "coordinator/connected_agents.hpp"
#include "coordinator/job_registry.hpp"
#include "coordinator/joining_peers.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/requests.hpp"
#include "coordinator/session.hpp"
#include "coordinator/turns.hpp"
#include "coordinator/write_batch.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"
#include "store/artifacts.hpp"
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
  // Threads that parse, validate and prepare agents' messages off the event
  // loop (--reader-threads); 0: one fewer than the machine's cores, at least 1
  // and at most 4.
  std::size_t reader_threads = 0;
  // The longest the loop runs queued results before it serves what else is
  // ready (turns.hpp).
  std::chrono::microseconds result_turn{5000};
};

// The coordinator is its listener, one Session a peer (coordinator/session.hpp),
// the request handlers (coordinator/requests.hpp) and the JobRegistry, which
// owns every job's state. A store error ends run() with store::SqliteError:
// the store is the truth, and a restarted coordinator resumes from it
// (docs/operations.md).
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

  // What clients ask over TCP, for a caller in the same process (`run`).
  Requests& requests() { return requests_; }
  void on_event(std::function<void(const JobEvent&)> observer) { registry_.on_event(std::move(observer)); }

 private:
  asio::awaitable<void> accept_loop();
  // The TLS handshake when configured, then the peer's Session to its end.
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);
  // Every heartbeat interval: a heartbeat to each agent, the registry's
  // deadlines, and the metrics' gauges.
  asio::awaitable<void> housekeeping();
  asio::awaitable<void> loop_lag_probe();  // with metrics only
  void refresh_metrics();

  asio::io_context& io_;
  CoordinatorOptions options_;
  store::Store& store_;
  WriteBatch batch_;
  SessionSettings session_settings_;
  ConnectedAgents agents_;
  JoiningPeers joining_;  // before requests_, which reads it
  JobRegistry registry_;
  Requests requests_;
  asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::unique_ptr<Metrics> metrics_;
  std::optional<store::ArtifactFiles> artifacts_;  // beside the store: the traces shipped with results
  std::set<std::string> lists_asked_;              // SessionParts::lists_asked
  Turns turns_;
  bool stopped_ = false;
  // Last, so that it is joined first: its work reads the parts above.
  asio::thread_pool readers_;
};

}  // namespace ts::coordinator
