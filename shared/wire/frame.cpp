#include "shared/wire/frame.hpp"

namespace ts::wire {

std::string encode_frame(const nlohmann::json& message, std::size_t max_bytes) {
  const auto payload = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (payload.size() > max_bytes) {
    throw FrameError("message of " + std::to_string(payload.size()) + " bytes exceeds the frame maximum of " +
                     std::to_string(max_bytes));
  }
  const auto length = static_cast<std::uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  for (int shift : {24, 16, 8, 0}) frame.push_back(static_cast<char>((length >> shift) & 0xff));
  frame += payload;
  return frame;
}

std::size_t payload_length(const FrameHeader& header, std::size_t max_bytes) {
  const std::size_t length = (std::size_t{header[0]} << 24) | (std::size_t{header[1]} << 16) |
                             (std::size_t{header[2]} << 8) | std::size_t{header[3]};
  if (length > max_bytes) {
    throw FrameError("frame of " + std::to_string(length) + " bytes exceeds the maximum of " +
                     std::to_string(max_bytes));
  }
  return length;
}

nlohmann::json decode_payload(std::string_view payload) {
  auto message = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) throw FrameError("frame payload is not valid JSON");
  if (!message.is_object()) throw FrameError("frame payload is not a JSON object");
  return message;
}

}  // namespace ts::wire
