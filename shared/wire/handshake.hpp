#pragma once
// The peer side of the opening exchange (docs/protocol.md): hello, then the
// answer to the coordinator's challenge when it sends one, then its welcome,
// whose proof is checked when this peer holds a token.
#include <boost/asio.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shared/wire/connection.hpp"

namespace ts::wire {

// Sends hello (`hello_fields` carry role, name, version, ...) and returns the
// coordinator's welcome, or an error message: the coordinator's own, or a
// fatal one made here when it demands a token this peer does not have or
// cannot prove that it holds ours. `timeout` is silence, not total time: the
// hello may take as long as the link needs while its bytes keep moving.
boost::asio::awaitable<nlohmann::json> peer_handshake(Connection& connection, const nlohmann::json& hello_fields,
                                                      const std::optional<std::string>& token,
                                                      std::chrono::steady_clock::duration timeout);

}  // namespace ts::wire
