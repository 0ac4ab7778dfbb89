#pragma once
// One figure of a node's measured peak (schemas/peak_flops.schema.json) for
// the devices a job runs on: what a result's MFU is measured against
// (agent/judge/efficiency.hpp) and what a plan's time is estimated from
// (shared/sweep/time_estimate.hpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ts {

struct PeakFigure {
  double flops_per_s = 0;
  nlohmann::json kernel;  // the probe's kernel that reached it (the first GPU's); null when not recorded
};

// The peak in `dtype` ("fp32", "tf32", "bf16") of the devices a job runs on:
// the CPU's at the job's thread count `threads` (else its first figure) for
// a CPU job, whose ranks share it; the sum over `gpus` (nvidia-smi indices)
// for a CUDA job. Nothing when `peak_flops` is not a document, a device is
// missing or its figure is null.
std::optional<PeakFigure> peak_figure(const nlohmann::json& peak_flops, bool cuda, const std::vector<int64_t>& gpus,
                                      const std::string& dtype, const nlohmann::json& threads);

}  // namespace ts
