// libFuzzer target: one frame payload through the coordinator's parsing and
// validation of a message (envelope, version, the type's schema), then the
// fields the coordinator reads from a hello and from an agent's outcome.
// Acceptable failures: FrameError and InvalidInput (a clear refusal).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shared/errors.hpp"
#include "shared/wire/frame.hpp"
#include "shared/wire/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto message = ts::wire::decode_payload(std::string_view(reinterpret_cast<const char*>(data), size));
    const auto type = ts::wire::validate_message(message);
    // What a validated message promises, the coordinator reads without checks.
    if (type == "hello") {
      (void)message.at("role").get<std::string>();
      (void)message.at("name").get<std::string>();
    } else if (type == "job_result" || type == "job_failed" || type == "progress") {
      (void)message.at("job_id").get<std::string>();
      (void)message.at("attempt").get<int64_t>();
    }
  } catch (const ts::wire::FrameError&) {
  } catch (const ts::InvalidInput&) {
  }
  return 0;
}
