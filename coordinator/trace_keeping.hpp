#pragma once
// The coordinator's half of a profile's trace (docs/explain.md, "Traces"):
// the file an agent shipped with a job_result goes among the store's
// artifacts, checked against the digest the runner gave, before the result
// that names it is stored.
#include <nlohmann/json.hpp>
#include <optional>

#include "store/artifacts.hpp"

namespace ts::coordinator {

// Keeps `message`'s trace (none: nothing to do) and marks `result`'s
// profile.trace stored; a damaged trace or a failed write is no stored
// trace, with the reason in the result, and the result is stored all the same.
void keep_trace(nlohmann::json& result, const nlohmann::json& message,
                const std::optional<store::ArtifactFiles>& artifacts);

}  // namespace ts::coordinator
