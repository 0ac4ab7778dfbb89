#include "agent/trace_shipping.hpp"

#include <fmt/format.h>

#include "agent/trace_summary.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/wire/attachment.hpp"

namespace ts::agent {

void attach_trace(nlohmann::json& message, const std::filesystem::path& directory) {
  auto& result = message.at("result");
  const nlohmann::json::json_pointer at("/profile/trace");
  if (!result.contains(at)) return;
  auto& trace = result[at];
  // The resolved job the runner echoes spells the limit (job.schema.json's default when the job gave none).
  const double limit_mib = result.at("job").at("profile").at("max_trace_mib").get<double>();
  const auto not_stored = [&](const std::string& reason) {
    trace["stored"] = false;
    trace["reason"] = reason;
    result["warnings"].push_back("profile: the trace was not stored: " + reason);
    log::warn("job {}: profile trace not shipped: {}", result.at("job").value("job_id", ""), reason);
  };
  std::filesystem::path file;
  try {
    file = trace_file(trace, directory);
  } catch (const std::runtime_error& failure) {
    return not_stored(failure.what());
  }
  std::error_code error;
  const auto bytes = std::filesystem::file_size(file, error);
  if (error) return not_stored("cannot read " + file.string() + ": " + error.message());
  if (static_cast<double>(bytes) > limit_mib * 1024 * 1024) {
    return not_stored(
        fmt::format("it is {:.3f} MiB, over the job's profile.max_trace_mib of {} MiB (fewer steps, or "
                    "record_shapes, memory and with_stack off, make it smaller)",
                    static_cast<double>(bytes) / (1024 * 1024), limit_mib));
  }
  try {
    const auto contents = json_io::read_text(file.string());
    auto attachment = wire::attachment_of(contents);
    if (attachment.at("sha256") != trace.at("sha256")) {
      return not_stored("its SHA-256 is not the one the runner gave: the file changed after the run");
    }
    message["trace"] = std::move(attachment);
  } catch (const std::runtime_error& failure) {
    not_stored(failure.what());
  }
}

}  // namespace ts::agent
