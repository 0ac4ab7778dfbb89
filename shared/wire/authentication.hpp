#pragma once
// Shared-token authentication of every connection (docs/security.md): an
// HMAC-SHA256 challenge-response during hello, in both directions, so that
// neither side learns the token and a replayed exchange is useless.
//
//   peer -> hello; coordinator -> challenge {nonce: Nc}
//   peer -> auth {nonce: Np, mac: HMAC(token, "torchsweep/1 peer" Nc Np role name)}
//   coordinator -> welcome {..., proof: HMAC(token, "torchsweep/1 coordinator" Nc Np)}
#include <optional>
#include <string>
#include <string_view>

namespace ts::wire {

// The token from `token_file` when given, else from $TORCHSWEEP_TOKEN;
// none when neither is set. Never from the command line, where other users
// could read it. Throws ts::InvalidInput (field `field`) for an unreadable
// file or a token shorter than 16 characters.
std::optional<std::string> load_token(const std::string& token_file, const std::string& field = "--token-file");

// 32 random bytes from the OS, hex-encoded.
std::string random_nonce();
// HMAC-SHA256 of `message` under `key`, hex-encoded.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
// Equality that takes as long for every mismatch position (no timing oracle).
bool equal_in_constant_time(std::string_view a, std::string_view b);

std::string peer_mac(std::string_view token, std::string_view coordinator_nonce, std::string_view peer_nonce,
                     std::string_view role, std::string_view name);
std::string coordinator_proof(std::string_view token, std::string_view coordinator_nonce, std::string_view peer_nonce);

}  // namespace ts::wire
