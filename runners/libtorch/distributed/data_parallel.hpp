#pragma once
// One rank's part in a data-parallel job (docs/multi-gpu.md): the ranks mpirun
// started (or this process alone), the collective for this rank's device, and the job's bucketing
// settings. Each rank trains on its own shard of `batch_size` samples, so a
// step processes ranks x batch_size samples.
#include <memory>

#include "runners/libtorch/distributed/collective.hpp"
#include "runners/libtorch/distributed/gradient_reducer.hpp"
#include "runners/libtorch/distributed/world.hpp"

namespace ts::worker {

struct DataParallel {
  const World& world;
  Collective& collective;
  ReducerOptions reducer;
};

// The seed of rank `rank`'s synthetic data. Rank 0 draws the batches a
// single-process run of the same job draws.
inline int64_t rank_data_seed(int64_t job_seed, int rank) { return job_seed + 1 + rank; }

// The collective for `device`: NCCL on CUDA (when compiled in), MPI on CPU
// (ranks mpirun started). Throws Unsupported for CUDA without NCCL, and for
// the CPU without MPI ranks.
std::unique_ptr<Collective> make_collective(const World& world, const torch::Device& device);

}  // namespace ts::worker
