#pragma once
// Task generate (docs/language-models.md): a decoder's greedy generation
// with a key/value cache, measured as training is (docs/methodology.md):
// warm-up generations, then each timed epoch one generation, the prompt's
// prefill its first step and the new_tokens - 1 decode steps the rest.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/job.hpp"
#include "runners/libtorch/precision.hpp"
#include "runners/libtorch/result.hpp"

namespace ts::worker {

// Runs the generate job into `result` (execution, timing, memory,
// generation, profile): eagerly, in one process (the worker's compiled mode
// traces a fixed-shape forward, and a decode step's cache grows a position a
// step); the cache is allocated for the whole generation and attention
// reads its filled positions only. A profile's trace goes in `beside_result`.
void run_generation_job(const Job& job, const torch::Device& device, const PrecisionPlan& plan,
                        const nlohmann::json& math, const std::filesystem::path& beside_result, Result& result);

}  // namespace ts::worker
