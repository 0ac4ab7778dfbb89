#include "shared/wire/protocol.hpp"

#include <map>
#include <mutex>

#include "shared/embedded_files.hpp"
#include "shared/errors.hpp"
#include "shared/schema.hpp"

namespace ts::wire {
namespace {

// Parsed once per process; every message type has protocol/<type>.schema.json.
const schema::Validator& validator_for(const std::string& type) {
  static const auto validators = [] {
    std::map<std::string, schema::Validator, std::less<>> all;
    for (const auto& [name, text] : embedded::files()) {
      constexpr std::string_view prefix = "protocol/", suffix = ".schema.json";
      if (!name.starts_with(prefix) || !name.ends_with(suffix)) continue;
      const auto type_name = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      all.emplace(std::string(type_name), schema::Validator(name));
    }
    return all;
  }();
  const auto found = validators.find(type);
  if (found == validators.end() || type == "envelope") {
    throw InvalidInput("type", "unknown message type '" + type + "'");
  }
  return found->second;
}

}  // namespace

nlohmann::json make_message(std::string_view type, nlohmann::json fields) {
  fields["v"] = protocol_version;
  fields["type"] = type;
  return fields;
}

nlohmann::json make_error(const std::string& reason, const std::string& field, bool fatal) {
  nlohmann::json error{{"reason", reason}};
  if (!field.empty()) error["field"] = field;
  if (fatal) error["fatal"] = true;
  return make_message("error", std::move(error));
}

std::string validate_message(const nlohmann::json& message) {
  static const schema::Validator envelope("protocol/envelope.schema.json");
  envelope.validate(message);
  const auto version = message.at("v").get<int>();
  if (version != protocol_version) {
    throw InvalidInput("v", "protocol version " + std::to_string(version) + " is not supported; this build speaks " +
                                std::to_string(protocol_version));
  }
  auto type = message.at("type").get<std::string>();
  validator_for(type).validate(message);
  return type;
}

}  // namespace ts::wire
