#include "shared/wire/dial.hpp"

namespace ts::wire {

asio::awaitable<std::shared_ptr<Connection>> dial(const Endpoint& endpoint, ssl::context* tls,
                                                  std::chrono::steady_clock::duration handshake_timeout) {
  const auto executor = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(executor);
  const auto endpoints =
      co_await resolver.async_resolve(endpoint.host, std::to_string(endpoint.port), asio::use_awaitable);
  asio::ip::tcp::socket socket(executor);
  co_await asio::async_connect(socket, endpoints, asio::use_awaitable);
  std::shared_ptr<Connection> connection;
  if (tls) {
    connection =
        std::make_shared<Connection>(co_await tls_connect(std::move(socket), *tls, endpoint.host, handshake_timeout));
  } else {
    connection = std::make_shared<Connection>(std::move(socket));
  }
  connection->start();
  co_return connection;
}

}  // namespace ts::wire
