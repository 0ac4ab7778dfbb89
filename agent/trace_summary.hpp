#pragma once
// The profile summary of a runner whose profiler keeps no per-operator
// table (the JAX and TensorFlow runners: their profilers write a trace,
// docs/explain.md): read from the trace in Chrome's trace event format and
// summed by the LibTorch worker's arithmetic (shared/profiles/summary.hpp),
// so every runner's profile has the same rows, however it was recorded.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "shared/profiles/summary.hpp"

namespace ts::agent {

// The file a result's profile.trace names in the job's `directory`; throws
// std::runtime_error when the name is a path out of it.
std::filesystem::path trace_file(const nlohmann::json& trace, const std::filesystem::path& directory);

// The complete events ("ph": "X") of a Chrome trace, as the summary takes
// them: a process named "/device:..." (XLA's device planes) holds the
// device's events, of which those on a "Stream" thread are kernels; every
// other process is the host's, nested per process and thread.
std::vector<profiles::ProfiledEvent> trace_events(const nlohmann::json& trace);

// Adds operators, kernels and totals to the profile section of `result`
// when its runner wrote a trace in `directory` and no summary: a trace that
// cannot be read leaves the section as it is, with a warning in the result.
void summarize_trace(nlohmann::json& result, const std::filesystem::path& directory);

}  // namespace ts::agent
