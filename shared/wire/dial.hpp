#pragma once
// How agents and clients reach the coordinator: resolve, connect, and when
// a TLS context is given, the TLS handshake that checks the coordinator's
// certificate names the host dialled.
#include <boost/asio.hpp>
#include <chrono>
#include <memory>

#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"
#include "shared/wire/tls.hpp"

namespace ts::wire {

// A started connection to `endpoint`; over TLS when `tls` is not null.
asio::awaitable<std::shared_ptr<Connection>> dial(const Endpoint& endpoint, ssl::context* tls,
                                                  std::chrono::steady_clock::duration handshake_timeout);

}  // namespace ts::wire
