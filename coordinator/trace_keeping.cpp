#include "coordinator/trace_keeping.hpp"

#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/wire/attachment.hpp"

namespace ts::coordinator {

void keep_trace(nlohmann::json& result, const nlohmann::json& message,
                const std::optional<store::ArtifactFiles>& artifacts) {
  const auto shipped = message.find("trace");
  const nlohmann::json::json_pointer at("/profile/trace");
  if (shipped == message.end() || !result.contains(at)) return;
  auto& trace = result[at];
  const auto not_stored = [&](const std::string& reason) {
    trace["stored"] = false;
    trace["reason"] = reason;
    result["warnings"].push_back("profile: the trace was not stored: " + reason);
    log::warn("job {}: profile trace not stored: {}", message.value("job_id", ""), reason);
  };
  if (!artifacts) return not_stored("the store is in memory, with no folder beside it for artifacts");
  try {
    const auto contents = wire::contents_of(*shipped, "trace");
    if (shipped->at("sha256") != trace.at("sha256")) {
      return not_stored("the file shipped is not the one the result's profile.trace.sha256 names");
    }
    artifacts->keep(trace.at("sha256").get<std::string>(), contents);
    trace["stored"] = true;
  } catch (const InvalidInput& damaged) {
    not_stored(std::string("the file shipped was damaged: ") + damaged.what());
  } catch (const std::exception& failed) {  // the disk: full, read-only
    not_stored(std::string("writing it among the artifacts failed: ") + failed.what());
  }
}

}  // namespace ts::coordinator
