#include "cli/client.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdlib>

#include "shared/errors.hpp"
#include "shared/version.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

namespace asio = boost::asio;

nlohmann::json request(const wire::Endpoint& coordinator, const nlohmann::json& message,
                       std::chrono::milliseconds timeout) {
  asio::io_context io;
  nlohmann::json reply;
  std::exception_ptr failure;
  auto exchange = [&]() -> asio::awaitable<void> {
    asio::ip::tcp::resolver resolver(io);
    const auto endpoints =
        co_await resolver.async_resolve(coordinator.host, std::to_string(coordinator.port), asio::use_awaitable);
    asio::ip::tcp::socket socket(io);
    co_await asio::async_connect(socket, endpoints, asio::use_awaitable);
    auto connection = std::make_shared<wire::Connection>(std::move(socket));
    connection->start();
    connection->send(wire::make_message(
        "hello", {{"role", "client"}, {"name", "torchsweep-cli"}, {"version", std::string(version::number())}}));
    for (const auto& outgoing : {nlohmann::json(), message}) {
      if (!outgoing.is_null()) connection->send(outgoing);
      reply = co_await wire::receive_within(*connection, timeout);
      if (wire::validate_message(reply) == "error") {
        connection->stop();
        throw InvalidInput(reply.value("field", ""), "coordinator refused: " + reply.at("reason").get<std::string>());
      }
    }
    connection->stop();
  };
  asio::co_spawn(io, exchange(), [&](std::exception_ptr error) { failure = error; });
  io.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const InvalidInput&) {
      throw;
    } catch (const std::exception& error) {
      throw std::runtime_error("coordinator " + coordinator.text() + ": " + error.what());
    }
  }
  return reply;
}

std::string submitter_name() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(user ? user : "unknown") + "@" + host;
}

}  // namespace ts::cli
