#pragma once
// Wire framing: a 4-byte big-endian payload length, then that many bytes of
// UTF-8 JSON. A length above the receiver's maximum is refused before any
// payload is read, so a hostile peer cannot make us allocate.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ts::wire {

inline constexpr std::size_t default_max_frame_bytes = 16u << 20;  // 16 MiB: a result with many step times fits

// A frame that breaks the framing rules; the connection cannot continue.
class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using FrameHeader = std::array<unsigned char, 4>;

// Header and payload of `message`; throws FrameError if the payload exceeds `max_bytes`.
std::string encode_frame(const nlohmann::json& message, std::size_t max_bytes = default_max_frame_bytes);
// The payload length announced by `header`; throws FrameError above `max_bytes`.
std::size_t payload_length(const FrameHeader& header, std::size_t max_bytes);
// Parses a payload; throws FrameError if it is not a JSON object.
nlohmann::json decode_payload(std::string_view payload);

}  // namespace ts::wire
