#include "shared/wire/attachment.hpp"

#include <openssl/evp.h>

#include <array>

#include "shared/errors.hpp"

namespace ts::wire {

std::string hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 0xf];
  }
  return text;
}

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return hex(digest.data(), size);
}

nlohmann::json attachment_of(std::string_view contents) {
  std::string data(4 * ((contents.size() + 2) / 3), '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(data.data()),
                      reinterpret_cast<const unsigned char*>(contents.data()), static_cast<int>(contents.size()));
  data.resize(static_cast<std::size_t>(written));
  return {{"sha256", sha256_hex(contents)}, {"bytes", contents.size()}, {"data", std::move(data)}};
}

std::string contents_of(const nlohmann::json& attachment, const std::string& field) {
  const auto member = [&](const char* name, nlohmann::json::value_t type) -> const nlohmann::json& {
    const auto found = attachment.find(name);
    // An unsigned count parses as unsigned; a signed one the same size is as good.
    const bool fits = found != attachment.end() &&
                      (found->type() == type || (type == nlohmann::json::value_t::number_unsigned &&
                                                 found->is_number_integer() && found->get<int64_t>() >= 0));
    if (!fits) throw InvalidInput(field + "." + name, "expected the attachment's " + std::string(name));
    return *found;
  };
  const auto& data = member("data", nlohmann::json::value_t::string).get_ref<const std::string&>();
  const auto bytes = member("bytes", nlohmann::json::value_t::number_unsigned).get<std::size_t>();
  const auto& sha256 = member("sha256", nlohmann::json::value_t::string).get_ref<const std::string&>();
  if (data.size() % 4 != 0 || data.size() != 4 * ((bytes + 2) / 3)) {
    throw InvalidInput(field + ".data", "expected base64 of " + std::to_string(bytes) + " bytes, got " +
                                            std::to_string(data.size()) + " characters");
  }
  std::string contents(data.size() / 4 * 3, '\0');
  if (EVP_DecodeBlock(reinterpret_cast<unsigned char*>(contents.data()),
                      reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size())) < 0) {
    throw InvalidInput(field + ".data", "expected base64");
  }
  contents.resize(bytes);  // EVP_DecodeBlock keeps the padding's zero bytes
  if (const auto actual = sha256_hex(contents); actual != sha256) {
    throw InvalidInput(field + ".sha256", "the data's SHA-256 is " + actual + ", not the " + sha256 + " it states");
  }
  return contents;
}

}  // namespace ts::wire
