#pragma once
// One rank's part in a data-parallel job (docs/multi-gpu.md): the ranks mpirun
// started, the collective for this rank's device, and the job's bucketing
// settings. Each rank trains on its own shard of `batch_size` samples, so a
// step processes ranks x batch_size samples.
#include <memory>

#include "agent/worker/distributed/collective.hpp"
#include "agent/worker/distributed/gradient_reducer.hpp"
#include "agent/worker/distributed/mpi_world.hpp"

namespace ts::worker {

struct DataParallel {
  const MpiWorld& world;
  Collective& collective;
  ReducerOptions reducer;
};

// The seed of rank `rank`'s synthetic data. Rank 0 draws the batches a
// single-process run of the same job draws.
inline int64_t rank_data_seed(int64_t job_seed, int rank) { return job_seed + 1 + rank; }

// The collective for `device`: NCCL on CUDA (when compiled in), MPI on CPU.
// Throws Unsupported for CUDA without NCCL.
std::unique_ptr<Collective> make_collective(const MpiWorld& world, const torch::Device& device);

}  // namespace ts::worker
