#pragma once
// The coordinator's TCP server: accepts agents and clients, checks their
// hello, keeps the registry of connected agents (heartbeats watched), and
// answers client requests.
#include <boost/asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

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
  wire::ConnectionLimits limits;
};

class Coordinator {
 public:
  // Binds at once (so port() is known); accepts after start().
  Coordinator(asio::io_context& io, CoordinatorOptions options);
  std::uint16_t port() const;
  void start();
  // Stops accepting and closes every session; idempotent.
  void stop();

 private:
  struct AgentRecord {
    std::shared_ptr<wire::Connection> connection;
    nlohmann::json capabilities;
    std::chrono::steady_clock::time_point connected_at;
    std::vector<std::string> running;
  };

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);
  asio::awaitable<void> serve_agent(std::shared_ptr<wire::Connection> connection, const nlohmann::json& hello);
  asio::awaitable<void> serve_client(std::shared_ptr<wire::Connection> connection);
  nlohmann::json status_reply() const;

  asio::io_context& io_;
  CoordinatorOptions options_;
  asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<wire::Connection>> connections_;
  std::map<std::string, AgentRecord> agents_;
  bool stopped_ = false;
};

}  // namespace ts::coordinator
