#pragma once
// The measured peak of this node's devices (`torchsweep-worker
// --probe-peak`): in fp32 and bf16 (and TF32 on a GPU) on the CPU and on
// each visible GPU, the best rate of dense matrix products at several sizes
// and of 3x3 convolutions, through the libraries the runners' models use
// (oneDNN/MKL on a CPU, cuBLAS/cuDNN on a GPU); on the CPU at the default
// thread count and at one. A datasheet figure is often unreachable; this is
// what the same LibTorch reaches here, and model FLOPs utilisation is
// reported against it (docs/methodology.md).
#include <cstdint>
#include <nlohmann/json.hpp>

namespace ts::worker {

struct PeakProbeOptions {
  int64_t largest_cpu_size = 1024;  // n of the n x n product on the CPU, at most
  int64_t cuda_size = 8192;         // on a GPU: large enough to saturate one
  double seconds_per_figure = 0.5;  // repetitions stop once this much time is spent
};

// {"devices": [{"device": "cpu"|"cuda:N", "name", "threads"|"index",
// "fp32": FLOP/s, "bf16": FLOP/s|null, "kernels": {"fp32": "matmul n=1024", ...}}]}
nlohmann::json probe_peak(const PeakProbeOptions& options = {});

}  // namespace ts::worker
