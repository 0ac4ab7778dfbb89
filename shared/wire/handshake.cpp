#include "shared/wire/handshake.hpp"

#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::wire {

boost::asio::awaitable<nlohmann::json> peer_handshake(Connection& connection, const nlohmann::json& hello_fields,
                                                      const std::optional<std::string>& token,
                                                      std::chrono::steady_clock::duration timeout) {
  connection.send(make_message("hello", hello_fields));
  // The answer's deadline starts once the hello has arrived: over a slow link
  // a hello of model lists takes longer than `timeout`, and is not silence.
  co_await connection.delivered(timeout);
  auto reply = co_await receive_within(connection, timeout);
  std::string peer_nonce;
  if (validate_message(reply) == "challenge") {
    if (!token) {
      co_return make_error("the coordinator requires a token: give --token-file or set TORCHSWEEP_TOKEN", "token",
                           true);
    }
    peer_nonce = random_nonce();
    connection.send(make_message("auth", {{"nonce", peer_nonce},
                                          {"mac", peer_mac(*token, reply.at("nonce").get<std::string>(), peer_nonce,
                                                           hello_fields.at("role").get<std::string>(),
                                                           hello_fields.at("name").get<std::string>())}}));
    const auto challenge_nonce = reply.at("nonce").get<std::string>();
    reply = co_await receive_within(connection, timeout);
    if (validate_message(reply) == "welcome" &&
        !equal_in_constant_time(reply.value("proof", ""), coordinator_proof(*token, challenge_nonce, peer_nonce))) {
      co_return make_error("the coordinator could not prove it holds our token", "proof", true);
    }
    co_return reply;
  }
  if (token && validate_message(reply) == "welcome") {
    // We hold a token, so a coordinator that asks for none is not ours.
    co_return make_error("the coordinator did not authenticate itself, but this peer has a token", "proof", true);
  }
  co_return reply;
}

}  // namespace ts::wire
