#include "coordinator/agent_message.hpp"

#include "coordinator/trace_keeping.hpp"
#include "shared/errors.hpp"
#include "shared/wire/frame.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

AgentMessage AgentMessage::read(nlohmann::json message, const std::optional<store::ArtifactFiles>& artifacts) {
  AgentMessage read;
  read.type = wire::validate_message(message);
  if ((read.type == "job_result" || read.type == "job_failed") && message.contains("result")) {
    auto& result = message["result"];
    const auto claimed = result.value("job", nlohmann::json::object());
    read.claims_attempt = claimed.value("job_id", "") == message.at("job_id").get<std::string>() &&
                          claimed.value("attempt", int64_t{1}) == message.at("attempt").get<int64_t>();
    if (read.claims_attempt) {
      // Kept before its job is known to be current: a superseded result's
      // file is named by no row, and `torchsweep gc` removes it.
      if (read.type == "job_result") keep_trace(result, message, artifacts);
      try {
        read.prepared = store::prepare_result(result);
      } catch (const InvalidInput& error) {
        read.invalid = error.what();
      }
    }
  }
  read.message = std::move(message);
  return read;
}

AgentMessage AgentMessage::parse(std::string_view payload, const std::optional<store::ArtifactFiles>& artifacts) {
  return read(wire::decode_payload(payload), artifacts);
}

}  // namespace ts::coordinator
