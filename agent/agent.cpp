#include "agent/agent.hpp"

#include "agent/capabilities.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/version.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::agent {

using asio::use_awaitable;

Agent::Agent(asio::io_context& io, AgentOptions options) : io_(io), options_(std::move(options)), backoff_timer_(io) {
  std::vector<std::string> runner_names;
  for (const auto& [name, path] : options_.runners) runner_names.push_back(name);
  capabilities_ = detect_capabilities(runner_names);
  if (options_.name.empty()) options_.name = capabilities_.at("hostname").get<std::string>();
}

void Agent::start() { asio::co_spawn(io_, run(), asio::detached); }

void Agent::stop() {
  stopped_ = true;
  backoff_timer_.cancel();
  if (connection_) connection_->stop();
}

asio::awaitable<void> Agent::run() {
  auto backoff = options_.initial_backoff;
  asio::ip::tcp::resolver resolver(io_);
  while (!stopped_ && !refused_) {
    try {
      const auto endpoints = co_await resolver.async_resolve(options_.coordinator.host,
                                                             std::to_string(options_.coordinator.port), use_awaitable);
      asio::ip::tcp::socket socket(io_);
      co_await asio::async_connect(socket, endpoints, use_awaitable);
      backoff = options_.initial_backoff;
      co_await session(std::move(socket));
    } catch (const std::exception& error) {
      if (!stopped_) log::warn("coordinator {}: {}", options_.coordinator.text(), error.what());
    }
    if (stopped_ || refused_) break;
    log::info("reconnecting in {} ms", backoff.count());
    backoff_timer_.expires_after(backoff);
    boost::system::error_code ignored;
    co_await backoff_timer_.async_wait(asio::redirect_error(use_awaitable, ignored));
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

asio::awaitable<void> Agent::session(asio::ip::tcp::socket socket) {
  connection_ = std::make_shared<wire::Connection>(std::move(socket));
  auto connection = connection_;
  connection->start();
  nlohmann::json hello{{"role", "agent"},
                       {"name", options_.name},
                       {"version", std::string(version::number())},
                       {"capabilities", capabilities_}};
  if (!options_.labels.empty()) hello["labels"] = options_.labels;
  connection->send(wire::make_message("hello", hello));
  const auto welcome = co_await wire::receive_within(*connection, std::chrono::seconds(10));
  if (wire::validate_message(welcome) == "error") {
    log::error("coordinator refused this agent: {}", welcome.at("reason").get<std::string>());
    refused_ = welcome.value("fatal", false);
    connection->stop();
    co_return;
  }
  const auto interval =
      std::chrono::milliseconds(static_cast<int64_t>(welcome.at("heartbeat_interval_s").get<double>() * 1000.0));
  log::info("connected to coordinator {} as {}", connection->peer(), options_.name);
  asio::co_spawn(io_, heartbeats(connection, interval), asio::detached);
  while (!connection->stopped()) {
    const auto message = co_await connection->receive();
    const auto type = wire::validate_message(message);
    if (type == "error") log::warn("coordinator says: {}", message.at("reason").get<std::string>());
  }
}

asio::awaitable<void> Agent::heartbeats(std::shared_ptr<wire::Connection> connection,
                                        std::chrono::milliseconds interval) {
  asio::steady_timer timer(io_);
  while (!connection->stopped()) {
    connection->send(wire::make_message("heartbeat", {{"running", nlohmann::json::array()}}));
    timer.expires_after(interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ignored));
  }
}

}  // namespace ts::agent
