#pragma once
// The node as the agent observes it (agent/node/: NVML and GPU telemetry,
// the machine's condition, the peak FLOP/s, the installed runners and
// environments and what they answer, the probe cache), seen from outside
// the agent: what the CLI asks of it, and nothing of how.
#include <nlohmann/json.hpp>

namespace ts::agent {

// What the runners and environments installed beside this program run, as
// the coordinator reads an agent's hello (runners, frameworks, models,
// modes, precisions, environments): the runners that answer, asked through
// the user's probe cache. For checking a sweep here before it is submitted.
nlohmann::json installed_runner_capabilities();

}  // namespace ts::agent
