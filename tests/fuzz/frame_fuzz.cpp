// libFuzzer target: a byte stream as the coordinator reads it, frame after
// frame (header, length check, payload, JSON object check), then re-encoded.
// The only acceptable failure is wire::FrameError.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "shared/wire/frame.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  constexpr std::size_t max_bytes = 1 << 16;  // small, so long inputs reach the limit
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (input.size() >= 4) {
    ts::wire::FrameHeader header;
    std::memcpy(header.data(), input.data(), 4);
    input.remove_prefix(4);
    try {
      const auto length = ts::wire::payload_length(header, max_bytes);
      if (length > input.size()) break;
      const auto message = ts::wire::decode_payload(input.substr(0, length));
      input.remove_prefix(length);
      const auto again = ts::wire::encode_frame(message, 2 * max_bytes);
      if (again.size() < 4) __builtin_trap();
    } catch (const ts::wire::FrameError&) {
      break;
    }
  }
  return 0;
}
