#pragma once
// Protocol messages (schemas/protocol/): versioned, typed JSON objects.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ts::wire {

inline constexpr int protocol_version = 2;

// {"v": 1, "type": type, ...fields}
nlohmann::json make_message(std::string_view type, nlohmann::json fields = nlohmann::json::object());

// An error message: `fatal` tells the peer the connection closes after it.
nlohmann::json make_error(const std::string& reason, const std::string& field = "", bool fatal = false);

// Checks the envelope, the version and the message's own schema. Returns the
// type. Throws ts::InvalidInput naming the field (a version this build does
// not speak is reported on field "v").
std::string validate_message(const nlohmann::json& message);

}  // namespace ts::wire
