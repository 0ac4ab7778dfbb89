#pragma once
// An agent's message as the coordinator's pool reads it, before the event
// loop acts on it (docs/operations.md, "Where the coordinator's time goes"):
// parsed, checked against its protocol schema and, for an outcome that
// carries this attempt's result, the trace it shipped kept among the
// artifacts and the result prepared for the store (store/prepared_result.hpp).
// What the loop then does is the job's state and the store's one writer.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "store/artifacts.hpp"
#include "store/prepared_result.hpp"

namespace ts::coordinator {

struct AgentMessage {
  std::string type;
  nlohmann::json message;
  // job_result, job_failed: whether its result names the job and attempt
  // the message reports (false without a result).
  bool claims_attempt = false;
  // Such a result, ready for the store; or, when it cannot be stored, why.
  std::optional<store::PreparedResult> prepared;
  std::string invalid;

  // Reads `message` (parsed already). Throws ts::InvalidInput for a message
  // its protocol schema refuses. Thread-safe.
  static AgentMessage read(nlohmann::json message, const std::optional<store::ArtifactFiles>& artifacts);
  // Parses `payload` first; also throws wire::FrameError for a payload that is no JSON object.
  static AgentMessage parse(std::string_view payload, const std::optional<store::ArtifactFiles>& artifacts);
};

}  // namespace ts::coordinator
