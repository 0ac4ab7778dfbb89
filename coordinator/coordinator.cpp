#include "coordinator/coordinator.hpp"

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/version.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using asio::use_awaitable;
using Clock = std::chrono::steady_clock;

Coordinator::Coordinator(asio::io_context& io, CoordinatorOptions options)
    : io_(io), options_(std::move(options)), acceptor_(io) {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(options_.listen.host), options_.listen.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
}

std::uint16_t Coordinator::port() const { return acceptor_.local_endpoint().port(); }

void Coordinator::start() {
  log::info("listening on {}:{}", options_.listen.host, port());
  asio::co_spawn(io_, accept_loop(), asio::detached);
}

void Coordinator::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& connection : connections_) connection->stop();
}

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
  auto connection = std::make_shared<wire::Connection>(std::move(socket), options_.limits);
  connections_.insert(connection);
  connection->start();
  try {
    const auto hello = co_await wire::receive_within(*connection, options_.handshake_timeout);
    const auto type = wire::validate_message(hello);
    if (type != "hello") throw InvalidInput("type", "the first message must be hello, got " + type);
    connection->send(wire::make_message(
        "welcome", {{"version", std::string(version::number())},
                    {"heartbeat_interval_s", std::chrono::duration<double>(options_.heartbeat_interval).count()}}));
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

asio::awaitable<void> Coordinator::serve_agent(std::shared_ptr<wire::Connection> connection,
                                               const nlohmann::json& hello) {
  const auto name = hello.at("name").get<std::string>();
  if (auto previous = agents_.find(name); previous != agents_.end()) {
    // The same node reconnected before its old session timed out.
    log::info("agent {} reconnected from {}; dropping its previous session", name, connection->peer());
    previous->second.connection->stop();
  }
  agents_[name] = AgentRecord{connection, hello.value("capabilities", nlohmann::json::object()), Clock::now(), {}};
  log::info("agent {} connected from {}", name, connection->peer());
  try {
    while (!connection->stopped()) {
      const auto message = co_await wire::receive_within(*connection, 3 * options_.heartbeat_interval);
      const auto type = wire::validate_message(message);
      auto& record = agents_.at(name);
      if (type == "heartbeat") {
        record.running = message.value("running", std::vector<std::string>{});
      } else {
        connection->send(wire::make_error("unexpected message type '" + type + "' from an agent", "type"));
      }
    }
  } catch (...) {
    const auto found = agents_.find(name);
    if (found != agents_.end() && found->second.connection == connection) agents_.erase(found);
    log::info("agent {} disconnected", name);
    throw;
  }
}

asio::awaitable<void> Coordinator::serve_client(std::shared_ptr<wire::Connection> connection) {
  while (!connection->stopped()) {
    const auto request = co_await wire::receive_within(*connection, options_.client_idle_timeout);
    const auto type = wire::validate_message(request);
    if (type == "status") {
      connection->send(status_reply());
    } else {
      connection->send(wire::make_error("unexpected message type '" + type + "' from a client", "type"));
    }
  }
}

nlohmann::json Coordinator::status_reply() const {
  nlohmann::json agents = nlohmann::json::array();
  const auto now = Clock::now();
  for (const auto& [name, record] : agents_) {
    const auto& capabilities = record.capabilities;
    agents.push_back({{"name", name},
                      {"address", record.connection->peer()},
                      {"hostname", capabilities.value("hostname", "")},
                      {"cpu_cores", capabilities.value("cpu_cores", 0)},
                      {"gpus", capabilities.contains("gpus") ? capabilities["gpus"].size() : 0},
                      {"connected_s", std::chrono::duration<double>(now - record.connected_at).count()},
                      {"running", record.running}});
  }
  return wire::make_message("status_reply", {{"sweeps", nlohmann::json::array()}, {"agents", agents}});
}

}  // namespace ts::coordinator
