#pragma once
// The collectives data-parallel training needs, behind one small interface:
// NCCL for CUDA tensors (nccl_collective.hpp) and MPI for CPU tensors
// (mpi_collective.hpp). Every rank must call them in the same order.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace ts::worker {

// An all-reduce in flight.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // Orders what this rank does next after the reduction: the host waits
  // (MPI), or the current CUDA stream waits (NCCL, no host block).
  virtual void wait() = 0;
  // Lets the library make progress without blocking (Open MPI advances a
  // non-blocking collective only inside MPI calls).
  virtual void poll() = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "mpi" or "nccl"
  // Starts summing `tensor` (contiguous, on this rank's device) in place
  // across all ranks. The tensor must not be touched until wait().
  virtual std::unique_ptr<PendingCollective> start_all_reduce_sum(const torch::Tensor& tensor) = 0;
  // Copies `tensor` of rank `root` into `tensor` of every rank.
  virtual void broadcast(const torch::Tensor& tensor, int root) = 0;
  // How long each all-reduce finished since the last call took, in start
  // order: from its start to its completion as this library sees it (CUDA
  // events on the communication stream for NCCL; the host clock from the
  // call to the completed wait or poll for MPI). Call with the device
  // synchronised.
  virtual std::vector<double> take_all_reduce_seconds() = 0;
  // How many all-reduces start between two take_all_reduce_seconds(): NCCL
  // makes their CUDA events up front, so that none is made in a timed step.
  virtual void expect_all_reduces(std::size_t count) { (void)count; }
  // Returns once every collective started so far has finished, or throws
  // with the reason: NCCL watches its communicator meanwhile and aborts it
  // on an asynchronous error (a rank gone) or past its deadline, so that a
  // hung collective fails the job with the reason instead of blocking the
  // next device synchronisation until the agent's timeout. Call before
  // synchronising the device. MPI's waits already end on the host.
  virtual void settle() {}
};

}  // namespace ts::worker
