#include "shared/wire/attachment.hpp"

#include <openssl/evp.h>

#include "shared/digest.hpp"
#include "shared/errors.hpp"

namespace ts::wire {

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
