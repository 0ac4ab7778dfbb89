#pragma once
// The job's fp32 math policy (docs/gpu.md): tf32 (TensorFloat-32 in fp32
// matrix products and cuDNN convolutions) and cudnn_benchmark (autotuned
// convolution algorithms), each "framework" (LibTorch's own default: TF32
// off for matrix products and on for convolutions, benchmark off), "on" or
// "off". Applied to LibTorch's global context before the model is built.
#include <nlohmann/json.hpp>

#include "runners/libtorch/job.hpp"

namespace ts::worker {

// Applies the policy and returns what is in effect, for execution.math:
// the asked values and the flags LibTorch then holds.
nlohmann::json apply_math_policy(const Job& job);

}  // namespace ts::worker
