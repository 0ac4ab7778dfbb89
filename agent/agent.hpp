#pragma once
// The agent's connection to the coordinator: hello with the node's
// capabilities, heartbeats, and reconnection with backoff when the
// coordinator goes away.
#include <boost/asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"

namespace ts::agent {

namespace asio = boost::asio;

struct AgentOptions {
  wire::Endpoint coordinator{"127.0.0.1", 7000};
  std::string name;  // default: the hostname
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> runners;  // runner name -> executable
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options);
  void start();
  void stop();
  // Set once a coordinator refused us for good (e.g. protocol version).
  bool refused() const noexcept { return refused_; }

 private:
  asio::awaitable<void> run();
  asio::awaitable<void> session(asio::ip::tcp::socket socket);
  asio::awaitable<void> heartbeats(std::shared_ptr<wire::Connection> connection, std::chrono::milliseconds interval);

  asio::io_context& io_;
  AgentOptions options_;
  nlohmann::json capabilities_;
  std::shared_ptr<wire::Connection> connection_;
  asio::steady_timer backoff_timer_;
  bool stopped_ = false;
  bool refused_ = false;
};

}  // namespace ts::agent
