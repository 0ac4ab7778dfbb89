#include "coordinator/session.hpp"

#include <set>
#include <utility>

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/model_lists.hpp"
#include "shared/seconds.hpp"
#include "shared/version.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

using Clock = std::chrono::steady_clock;

namespace {
// Agents' messages shorter than this (heartbeats, progress, refusals) are
// read on the loop: parsing them costs less than the pool's round trip.
constexpr std::size_t read_on_the_loop_below = 2048;
}  // namespace

Session::Session(std::shared_ptr<wire::Connection> connection, const SessionSettings& settings, SessionParts parts)
    : connection_(std::move(connection)), settings_(settings), parts_(parts) {}

asio::awaitable<void> Session::run() {
  auto& connection = *connection_;
  connection.keep_alive(settings_.heartbeat_interval);
  connection.start();
  try {
    const auto hello = co_await receive_while_joining();
    const auto type = wire::validate_message(hello);
    if (type != "hello") throw InvalidInput("type", "the first message must be hello, got " + type);
    nlohmann::json welcome{{"version", std::string(version::number())},
                           {"heartbeat_interval_s", seconds_of(settings_.heartbeat_interval)},
                           {"reattach_grace_s", seconds_of(settings_.reattach_grace)}};
    if (settings_.token) welcome["proof"] = co_await authenticate(hello);
    if (hello.at("role") == "agent") {
      auto capabilities = hello.value("capabilities", nlohmann::json::object());
      const auto missing = keep_model_lists(capabilities);
      if (!missing.empty()) welcome["send_lists"] = missing;
      connection.send(wire::make_message("welcome", welcome));
      if (!missing.empty()) co_await receive_model_lists(missing);
      co_await serve_agent(hello, std::move(capabilities));
    } else {
      connection.send(wire::make_message("welcome", welcome));
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

asio::awaitable<nlohmann::json> Session::receive_while_joining() {
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

std::vector<std::string> Session::keep_model_lists(nlohmann::json& capabilities) {
  // An agent from before digests sends its lists inline: kept all the same, once each.
  const auto inline_lists = model_lists::replace_by_digests(capabilities);
  if (!inline_lists.empty()) parts_.batch.open();
  for (const auto& [digest, names] : inline_lists) parts_.store.record_model_list(digest, names);
  // A list another agent is sending now is not asked for twice: a fleet of
  // one image joining a new coordinator at once would send it from every agent.
  std::set<std::string> missing;
  model_lists::for_each_list(std::as_const(capabilities), [&](const nlohmann::json& list) {
    const auto& digest = list.get_ref<const std::string&>();
    if (!parts_.store.has_model_list(digest) && !parts_.lists_asked.contains(digest)) missing.insert(digest);
  });
  parts_.lists_asked.insert(missing.begin(), missing.end());
  return {missing.begin(), missing.end()};
}

asio::awaitable<void> Session::receive_model_lists(const std::vector<std::string>& missing) {
  // Asked of this agent until it has answered, or failed to: then any agent may be asked again.
  struct Answered {
    std::set<std::string>& asked;
    const std::vector<std::string>& missing;
    ~Answered() {
      for (const auto& digest : missing) asked.erase(digest);
    }
  } answered{parts_.lists_asked, missing};
  // Still joining (status) while the lists cross the link, which may be slow.
  const auto message = co_await receive_while_joining();
  if (const auto type = wire::validate_message(message); type != "lists") {
    throw InvalidInput("type", "expected the lists the welcome asked for (send_lists), got " + type);
  }
  const auto& sent = message.at("lists");
  parts_.batch.open();
  for (const auto& digest : missing) {
    const auto names = sent.find(digest);
    if (names == sent.end()) throw InvalidInput("lists", "the model list " + digest + " the welcome asked for");
    if (const auto actual = model_lists::digest_of(*names); actual != digest) {
      throw InvalidInput("lists." + digest, "names whose digest is their key; these have " + actual);
    }
    parts_.store.record_model_list(digest, *names);
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

asio::awaitable<void> Session::serve_agent(const nlohmann::json& hello, nlohmann::json capabilities) {
  const auto name = hello.at("name").get<std::string>();
  if (parts_.agents.drop(name)) {
    // The same node reconnected before its old session timed out: what it
    // still runs is reattached from its hello, the rest waits for the grace.
    log::info("agent {} reconnected from {}; dropping its previous session", name, connection_->peer());
    parts_.registry.agent_lost(name);
  }
  const auto labels = hello.value("labels", nlohmann::json::object());
  parts_.agents.add(name, ConnectedAgent::of(name, connection_, capabilities, labels));
  parts_.batch.open();
  parts_.store.record_agent(name, capabilities, labels);
  log::info("agent {} connected from {}", name, connection_->peer());
  parts_.registry.agent_connected(AgentResources::from_hello(hello), hello.value("running", nlohmann::json::array()));
  try {
    while (!connection_->stopped()) {
      const auto payload = co_await wire::receive_payload_within(*connection_, 3 * settings_.heartbeat_interval);
      parts_.agents.heard(name);
      // A result goes to the pool; a heartbeat costs less read here than the trip.
      auto read = payload.size() < read_on_the_loop_below
                      ? AgentMessage::parse(payload, parts_.artifacts)
                      : co_await asio::co_spawn(
                            parts_.readers,
                            [&]() -> asio::awaitable<AgentMessage> {
                              co_return AgentMessage::parse(payload, parts_.artifacts);
                            },
                            asio::use_awaitable);
      co_await on_agent_message(name, std::move(read));
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

asio::awaitable<void> Session::on_agent_message(const std::string& agent, AgentMessage read) {
  const auto& type = read.type;
  if (type == "heartbeat") {
    parts_.registry.heartbeat(agent, read.message.value("running", nlohmann::json::array()));
  } else if (type == "job_accepted") {
    co_return;
  } else if (type == "job_refused") {
    parts_.registry.refused(agent, read.message);
  } else if (type == "progress") {
    parts_.registry.progress(agent, read.message);
  } else if (type == "job_result" || type == "job_failed") {
    // In the loop's turns: a flood of results does not hold it (turns.hpp).
    co_await parts_.turns.run([&, arrived = Clock::now()] {
      // The agent forgets its spooled copy on this ack: only once it is stored.
      parts_.batch.after_commit(
          [connection = connection_, ack = parts_.registry.outcome(agent, read), metrics = parts_.metrics, arrived] {
            if (metrics) metrics->result_ingested(Clock::now() - arrived);
            connection->send(ack);
          });
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
      auto reply = co_await parts_.requests.answer(type, request, parts_.readers, parts_.turns);
      // A submission or cancel is answered once it is committed.
      parts_.batch.after_commit([connection = connection_, reply = std::move(reply)] { connection->send(reply); });
    } catch (const InvalidInput& error) {
      // A bad request changes nothing and the client may try again.
      connection_->send(wire::make_error(error.what(), error.field()));
    }
  }
}

}  // namespace ts::coordinator
