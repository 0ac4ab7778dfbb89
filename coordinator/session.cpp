#include "coordinator/session.hpp"

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/seconds.hpp"
#include "shared/version.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using Clock = std::chrono::steady_clock;

Session::Session(std::shared_ptr<wire::Connection> connection, const SessionSettings& settings, SessionParts parts)
    : connection_(std::move(connection)), settings_(settings), parts_(parts) {}

asio::awaitable<void> Session::run() {
  auto& connection = *connection_;
  connection.keep_alive(settings_.heartbeat_interval);
  connection.start();
  try {
    const auto hello = co_await receive_hello();
    const auto type = wire::validate_message(hello);
    if (type != "hello") throw InvalidInput("type", "the first message must be hello, got " + type);
    nlohmann::json welcome{{"version", std::string(version::number())},
                           {"heartbeat_interval_s", seconds_of(settings_.heartbeat_interval)},
                           {"reattach_grace_s", seconds_of(settings_.reattach_grace)}};
    if (settings_.token) welcome["proof"] = co_await authenticate(hello);
    connection.send(wire::make_message("welcome", welcome));
    if (hello.at("role") == "agent") {
      co_await serve_agent(hello);
    } else {
      co_await serve_client();
    }
  } catch (const InvalidInput& error) {
    log::warn("{}: refused: {}", connection.peer(), error.what());
    connection.send_and_close(wire::make_error(error.what(), error.field(), /*fatal=*/true));
  } catch (const wire::FrameError& error) {
    log::warn("{}: closing: {}", connection.peer(), error.what());
    connection.stop();
  } catch (const boost::system::system_error& error) {
    if (error.code() == asio::error::timed_out) log::warn("{}: closing: {}", connection.peer(), "timed out");
    connection.stop();
  } catch (const store::SqliteError&) {
    connection.stop();
    throw;
  } catch (const std::exception& error) {
    // A coroutine root: nothing above it would report this.
    log::error("{}: session failed: {}", connection.peer(), error.what());
    connection.stop();
  }
}

asio::awaitable<nlohmann::json> Session::receive_hello() {
  parts_.joining.add(*connection_);
  try {
    auto hello = co_await wire::receive_within(*connection_, settings_.handshake_timeout);
    parts_.joining.remove(*connection_);
    co_return hello;
  } catch (...) {
    parts_.joining.remove(*connection_);
    throw;
  }
}

asio::awaitable<std::string> Session::authenticate(const nlohmann::json& hello) {
  const auto nonce = wire::random_nonce();
  connection_->send(wire::make_message("challenge", {{"nonce", nonce}}));
  const auto answer = co_await wire::receive_within(*connection_, settings_.handshake_timeout);
  if (wire::validate_message(answer) != "auth") throw InvalidInput("type", "expected auth after a challenge");
  const auto peer_nonce = answer.at("nonce").get<std::string>();
  const auto expected = wire::peer_mac(*settings_.token, nonce, peer_nonce, hello.at("role").get<std::string>(),
                                       hello.at("name").get<std::string>());
  if (!wire::equal_in_constant_time(expected, answer.at("mac").get<std::string>())) {
    log::warn("{}: authentication failed for {} '{}'", connection_->peer(), hello.at("role").get<std::string>(),
              hello.at("name").get<std::string>());
    throw InvalidInput("mac", "authentication failed: wrong token");
  }
  co_return wire::coordinator_proof(*settings_.token, nonce, peer_nonce);
}

asio::awaitable<void> Session::serve_agent(const nlohmann::json& hello) {
  const auto name = hello.at("name").get<std::string>();
  if (parts_.agents.drop(name)) {
    // The same node reconnected before its old session timed out: what it
    // still runs is reattached from its hello, the rest waits for the grace.
    log::info("agent {} reconnected from {}; dropping its previous session", name, connection_->peer());
    parts_.registry.agent_lost(name);
  }
  const auto capabilities = hello.value("capabilities", nlohmann::json::object());
  const auto labels = hello.value("labels", nlohmann::json::object());
  parts_.agents.add(name, {connection_, capabilities, labels, Clock::now(), Clock::now()});
  parts_.batch.open();
  parts_.store.record_agent(name, capabilities, labels);
  log::info("agent {} connected from {}", name, connection_->peer());
  parts_.registry.agent_connected(AgentResources::from_hello(hello), hello.value("running", nlohmann::json::array()));
  try {
    while (!connection_->stopped()) {
      const auto message = co_await wire::receive_within(*connection_, 3 * settings_.heartbeat_interval);
      parts_.agents.heard(name);
      on_agent_message(name, wire::validate_message(message), message);
    }
  } catch (const store::SqliteError&) {
    throw;
  } catch (...) {
    if (parts_.agents.disconnect(name, *connection_)) {
      log::info("agent {} ({}) disconnected", name, connection_->peer());
      parts_.registry.agent_lost(name);
    }
    throw;
  }
}

void Session::on_agent_message(const std::string& agent, const std::string& type, const nlohmann::json& message) {
  if (type == "heartbeat") {
    parts_.registry.heartbeat(agent, message.value("running", nlohmann::json::array()));
  } else if (type == "job_accepted") {
    return;
  } else if (type == "job_refused") {
    parts_.registry.refused(agent, message);
  } else if (type == "progress") {
    parts_.registry.progress(agent, message);
  } else if (type == "job_result" || type == "job_failed") {
    // The agent forgets its spooled copy on this ack: only once it is stored.
    parts_.batch.after_commit([connection = connection_, ack = parts_.registry.outcome(agent, type, message),
                               metrics = parts_.metrics, arrived = Clock::now()] {
      if (metrics) metrics->result_ingested(Clock::now() - arrived);
      connection->send(ack);
    });
  } else {
    connection_->send(wire::make_error("unexpected message type '" + type + "' from an agent", "type"));
  }
}

asio::awaitable<void> Session::serve_client() {
  while (!connection_->stopped()) {
    const auto request = co_await wire::receive_within(*connection_, settings_.client_idle_timeout);
    const auto type = wire::validate_message(request);
    try {
      // A submission or cancel is answered once it is committed.
      parts_.batch.after_commit(
          [connection = connection_, reply = parts_.requests.answer(type, request)] { connection->send(reply); });
    } catch (const InvalidInput& error) {
      // A bad request changes nothing and the client may try again.
      connection_->send(wire::make_error(error.what(), error.field()));
    }
  }
}

}  // namespace ts::coordinator
