#include "runners/libtorch/distributed/data_parallel.hpp"

#include "runners/libtorch/device.hpp"
#ifdef TORCHSWEEP_WITH_MPI
#include "runners/libtorch/distributed/mpi_collective.hpp"
#endif
#ifdef TORCHSWEEP_WITH_NCCL
#include "runners/libtorch/distributed/nccl_collective.hpp"
#endif

namespace ts::worker {

// world goes unused in a build with neither MPI nor NCCL.
std::unique_ptr<Collective> make_collective([[maybe_unused]] const World& world, const torch::Device& device) {
  if (device.is_cpu()) {
#ifdef TORCHSWEEP_WITH_MPI
    if (const auto* ranks = dynamic_cast<const MpiWorld*>(&world)) return std::make_unique<MpiCollective>(*ranks);
#endif
    throw Unsupported(
        "data-parallel training on the CPU all-reduces over MPI, between ranks mpirun started; "
        "this process was not (data_parallel: always is for one CUDA rank, gpus: 2 or more for CPU ranks)");
  }
#ifdef TORCHSWEEP_WITH_NCCL
  return std::make_unique<NcclCollective>(world, device);
#else
  throw Unsupported("multi-rank jobs on " + device.str() +
                    " need NCCL, which this torchsweep-worker was built without");
#endif
}

}  // namespace ts::worker
