#pragma once
#include <cstdint>
#include <string>

namespace ts::wire {

struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// "HOST:PORT" (PORT 0 = any free port, for listening). Throws
// ts::InvalidInput naming `field` when malformed.
Endpoint parse_endpoint(const std::string& text, const std::string& field);

}  // namespace ts::wire
