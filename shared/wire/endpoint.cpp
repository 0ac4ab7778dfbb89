#include "shared/wire/endpoint.hpp"

#include <charconv>

#include "shared/errors.hpp"

namespace ts::wire {

Endpoint parse_endpoint(const std::string& text, const std::string& field) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InvalidInput(field, "expected HOST:PORT, got '" + text + "'");
  }
  unsigned port = 0;
  const auto* begin = text.data() + colon + 1;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(begin, end, port);
  if (error != std::errc() || stop != end || port > 65535) {
    throw InvalidInput(field, "expected a port number 0-65535 after ':', got '" + text.substr(colon + 1) + "'");
  }
  auto host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, static_cast<std::uint16_t>(port)};
}

}  // namespace ts::wire
