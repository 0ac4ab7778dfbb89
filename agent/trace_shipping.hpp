#pragma once
// A profile's trace travels to the coordinator with its result (docs/explain.md,
// "Traces"): read from the job's directory and attached to the job_result
// message, within the job's profile.max_trace_mib; a larger or unreadable
// trace stays behind and the result says why.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace ts::agent {

// Adds `trace` (shared/wire/attachment.hpp) to a job_result `message` whose
// result names a profile trace in `directory`; else marks the result's
// profile.trace not stored, with the reason, and warns in the result.
void attach_trace(nlohmann::json& message, const std::filesystem::path& directory);

}  // namespace ts::agent
