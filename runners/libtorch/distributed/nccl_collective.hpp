#pragma once
// Collectives on CUDA tensors through NCCL, bootstrapped the nccl-tests way:
// rank 0 creates the ncclUniqueId, the world (MPI) broadcasts it, every rank calls
// ncclCommInitRank on the GPU of its local rank. All-reduces run on a
// communication stream of their own that first waits for the current
// (compute) stream, so a bucket can be reduced while backward goes on.
// Compiled only when CUDA LibTorch and NCCL were found (TORCHSWEEP_WITH_NCCL).
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <vector>

#include "runners/libtorch/distributed/collective.hpp"
#include "runners/libtorch/distributed/world.hpp"

namespace ts::worker {

class NcclCollective final : public Collective {
 public:
  NcclCollective(const World& world, torch::Device device);
  ~NcclCollective() override;
  NcclCollective(const NcclCollective&) = delete;
  NcclCollective& operator=(const NcclCollective&) = delete;

  int rank() const override { return world_.rank(); }
  int size() const override { return world_.size(); }
  std::string backend() const override { return "nccl"; }
  std::unique_ptr<PendingCollective> start_all_reduce_sum(const torch::Tensor& tensor) override;
  void broadcast(const torch::Tensor& tensor, int root) override;
  std::vector<double> take_all_reduce_seconds() override;
  void expect_all_reduces(std::size_t count) override;
  void settle() override;

  // How long settle() waits for the collectives in flight: PyTorch's
  // ProcessGroupNCCL's default timeout.
  static constexpr std::chrono::seconds settle_deadline{600};

 private:
  // Aborts the communicator (NCCL's way out of a hung or failed collective)
  // and throws `reason`.
  [[noreturn]] void abort(const std::string& reason);

  const World& world_;
  torch::Device device_;
  ncclComm_t communicator_ = nullptr;
  c10::cuda::CUDAStream stream_;
  // The events of one all-reduce: the compute stream's point it waits for,
  // its start and end (timed), and its completion the compute stream waits
  // for. Made and recorded once, then reused: slots_[i] serves the i-th
  // all-reduce since the last take_all_reduce_seconds().
  struct Slot {
    at::cuda::CUDAEvent ready, start{cudaEventDefault}, end{cudaEventDefault}, done;
  };
  Slot& next_slot();
  std::vector<std::unique_ptr<Slot>> slots_;  // pointers: a pending wait holds its slot's `done`
  std::size_t used_ = 0;
};

}  // namespace ts::worker
