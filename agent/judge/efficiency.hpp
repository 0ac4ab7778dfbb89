#pragma once
// The "efficiency" section the agent adds to a successful result
// (schemas/result.schema.json): the model's FLOPs per step, counted
// analytically (shared/models/flops.hpp), the rate achieved at the median
// step time, and its fraction of the measured peak of the devices the job
// ran on (agent/node/peak_flops.hpp). One computation for every runner.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ts::agent {

// `peak_flops`: this agent's capabilities.peak_flops (null: no utilisation);
// `gpus`: the GPU indices the coordinator assigned. Nothing for a result
// without a median step time, or of a model schemas/models.json lacks.
std::optional<nlohmann::json> efficiency_of(const nlohmann::json& result, const nlohmann::json& peak_flops,
                                            const std::vector<int64_t>& gpus);

}  // namespace ts::agent
