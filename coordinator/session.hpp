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
#include <set>
#include <string>
#include <vector>

#include "coordinator/agent_message.hpp"
#include "coordinator/connected_agents.hpp"
#include "coordinator/job_registry.hpp"
#include "coordinator/joining_peers.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/requests.hpp"
#include "coordinator/turns.hpp"
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
  // Where agents' messages are parsed, validated and prepared for the store
  // off the loop (agent_message.hpp), and the loop's turns that act on results.
  asio::thread_pool& readers;
  Turns& turns;
  const std::optional<store::ArtifactFiles>& artifacts;  // beside the store: the traces shipped with results
  std::set<std::string>& lists_asked;                    // model lists an agent's welcome asked for, not yet answered
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
  // A message of the handshake (the hello, an agent's model lists), within
  // the handshake timeout of silence; the connection is among the joining
  // peers (status) while it arrives.
  asio::awaitable<nlohmann::json> receive_while_joining();
  // Challenges the peer for the token; returns the coordinator's proof for
  // the welcome. Throws ts::InvalidInput when the peer's answer is wrong.
  asio::awaitable<std::string> authenticate(const nlohmann::json& hello);
  // Keeps the model lists an agent's `capabilities` carry inline, leaving
  // their digests (shared/model_lists.hpp); returns the digests it names
  // whose lists the store lacks, which the welcome asks for.
  std::vector<std::string> keep_model_lists(nlohmann::json& capabilities);
  // The agent's lists message with those lists, each checked against its digest.
  asio::awaitable<void> receive_model_lists(const std::vector<std::string>& missing);
  // `capabilities`: the hello's, model lists by digest.
  asio::awaitable<void> serve_agent(const nlohmann::json& hello, nlohmann::json capabilities);
  asio::awaitable<void> serve_client();
  asio::awaitable<void> on_agent_message(const std::string& agent, AgentMessage read);

  std::shared_ptr<wire::Connection> connection_;
  const SessionSettings& settings_;
  SessionParts parts_;
};

}  // namespace ts::coordinator
