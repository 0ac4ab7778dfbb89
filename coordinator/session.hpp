#pragma once
// One peer's session with the coordinator: its hello (and the token's
// challenge), then an agent's messages or a client's requests, until the
// peer leaves, falls silent or stop() is called. The connection below it
// (shared/wire/connection.hpp) owns the reader and writer coroutines; the
// request handlers (coordinator/requests.hpp) and the job registry decide.
#include <boost/asio.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "coordinator/connected_agents.hpp"
#include "coordinator/job_registry.hpp"
#include "coordinator/joining_peers.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/requests.hpp"
#include "coordinator/write_batch.hpp"
#include "shared/wire/connection.hpp"

namespace ts::coordinator {

namespace asio = boost::asio;

// The coordinator's settings a session follows.
struct SessionSettings {
  std::chrono::milliseconds heartbeat_interval;  // an agent silent for 3 is dropped
  std::chrono::milliseconds handshake_timeout;
  std::chrono::milliseconds client_idle_timeout;
  std::chrono::milliseconds reattach_grace;  // told to agents in the welcome
  std::optional<std::string> token;          // the shared token a peer must prove it holds
};

// What a session reaches: the coordinator's parts, which outlive it.
struct SessionParts {
  store::Store& store;
  WriteBatch& batch;
  JobRegistry& registry;
  ConnectedAgents& agents;
  Requests& requests;
  JoiningPeers& joining;
  Metrics* metrics;  // null without --metrics-listen
};

class Session {
 public:
  Session(std::shared_ptr<wire::Connection> connection, const SessionSettings& settings, SessionParts parts);
  // Runs the session to its end. A peer's bad input, a broken frame or a
  // timeout end it with a log line; a store error is rethrown: the store is
  // the truth, and carrying on without it would corrupt it.
  asio::awaitable<void> run();
  // Closes the connection; run() then returns. Idempotent.
  void stop() { connection_->stop(); }

 private:
  // The peer's first message, within the handshake timeout of silence; the
  // connection is among the joining peers (status) while it arrives.
  asio::awaitable<nlohmann::json> receive_hello();
  // Challenges the peer for the token; returns the coordinator's proof for
  // the welcome. Throws ts::InvalidInput when the peer's answer is wrong.
  asio::awaitable<std::string> authenticate(const nlohmann::json& hello);
  asio::awaitable<void> serve_agent(const nlohmann::json& hello);
  asio::awaitable<void> serve_client();
  void on_agent_message(const std::string& agent, const std::string& type, const nlohmann::json& message);

  std::shared_ptr<wire::Connection> connection_;
  const SessionSettings& settings_;
  SessionParts parts_;
};

}  // namespace ts::coordinator
