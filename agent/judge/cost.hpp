#pragma once
// The "cost" section the agent adds to a successful result
// (schemas/result.schema.json, docs/methodology.md "What a result costs"):
// what the run's devices cost at a price per device-hour, per million
// samples and tokens at the measured throughput, and for the whole run.
#include <nlohmann/json.hpp>
#include <optional>

namespace ts::agent {

// `prices`: the agent's price per device-hour by device name (an object,
// possibly empty); the job's `price_per_hour` wins for a device it names.
// `run_seconds`: the runner's wall time as the agent measured it (none: no
// run cost). Nothing where neither prices the result's device.
std::optional<nlohmann::json> cost_of(const nlohmann::json& result, const nlohmann::json& prices,
                                      std::optional<double> run_seconds);

}  // namespace ts::agent
