#pragma once
// The measured peak of this node's devices (`torchsweep-worker
// --probe-peak`): a short dense matrix product in fp32 and bf16 on the CPU
// and on each visible GPU, best rate of a few repetitions. A datasheet
// figure is often unreachable; this is what the same LibTorch reaches here,
// and model FLOPs utilisation is reported against it (docs/methodology.md).
#include <cstdint>
#include <nlohmann/json.hpp>

namespace ts::worker {

struct PeakProbeOptions {
  int64_t largest_cpu_size = 1024;  // n of the n x n product on the CPU, at most
  int64_t cuda_size = 8192;         // on a GPU: large enough to saturate one
  double seconds_per_figure = 0.5;  // repetitions stop once this much time is spent
};

// {"devices": [{"device": "cpu"|"cuda:N", "name", "threads"|"index",
// "fp32": FLOP/s, "bf16": FLOP/s|null, "matmul_size": {"fp32": n, "bf16": n}}]}
nlohmann::json probe_peak(const PeakProbeOptions& options = {});

}  // namespace ts::worker
