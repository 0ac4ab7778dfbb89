#include "shared/wire/authentication.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/digest.hpp"

namespace ts::wire {
namespace {

std::string trimmed(std::string text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  text.erase(end == std::string::npos ? 0 : end + 1);
  return text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
}

}  // namespace

std::optional<std::string> load_token(const std::string& token_file, const std::string& field) {
  std::string token;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) throw InvalidInput(field, "cannot read the token file '" + token_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    token = trimmed(text.str());
    struct stat info {};
    if (::stat(token_file.c_str(), &info) == 0 && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      log::warn("{}: the token file is readable by other users; chmod 600 it", token_file);
    }
  } else if (const char* variable = std::getenv("TORCHSWEEP_TOKEN"); variable != nullptr) {
    token = trimmed(variable);
    if (token.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (token.size() < 16) throw InvalidInput(field, "the token must have at least 16 characters");
  return token;
}

std::string random_nonce() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("the OS random number generator failed");
  }
  return hex(bytes.data(), bytes.size());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(), &size) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return hex(digest.data(), size);
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string peer_mac(std::string_view token, std::string_view coordinator_nonce, std::string_view peer_nonce,
                     std::string_view role, std::string_view name) {
  // Fields joined by a separator that none of them can contain (nonces are
  // hex, role a word; the name goes last), so no two inputs share a message.
  return hmac_sha256_hex(token, std::string("torchsweep/1 peer\n") + std::string(coordinator_nonce) + "\n" +
                                    std::string(peer_nonce) + "\n" + std::string(role) + "\n" + std::string(name));
}

std::string coordinator_proof(std::string_view token, std::string_view coordinator_nonce, std::string_view peer_nonce) {
  return hmac_sha256_hex(token, std::string("torchsweep/1 coordinator\n") + std::string(coordinator_nonce) + "\n" +
                                    std::string(peer_nonce));
}

}  // namespace ts::wire
