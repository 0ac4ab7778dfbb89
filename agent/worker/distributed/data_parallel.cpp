#include "agent/worker/distributed/data_parallel.hpp"

#include "agent/worker/device.hpp"
#include "agent/worker/distributed/mpi_collective.hpp"
#ifdef TORCHSWEEP_WITH_NCCL
#include "agent/worker/distributed/nccl_collective.hpp"
#endif

namespace ts::worker {

std::unique_ptr<Collective> make_collective(const MpiWorld& world, const torch::Device& device) {
  if (device.is_cpu()) return std::make_unique<MpiCollective>(world);
#ifdef TORCHSWEEP_WITH_NCCL
  return std::make_unique<NcclCollective>(world, device);
#else
  throw Unsupported("multi-rank jobs on " + device.str() +
                    " need NCCL, which this torchsweep-worker was built without");
#endif
}

}  // namespace ts::worker
