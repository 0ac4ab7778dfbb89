#pragma once
// The ranks of one multi-rank job, as Open MPI's mpirun started them: MPI is
// initialised for the life of this object, and it offers the few host-side
// exchanges the worker needs besides gradient all-reduce (the NCCL unique id,
// per-rank reports, replica checksums). Plain MPI C calls, as nccl-tests
// bootstraps NCCL.
#include <mpi.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::worker {

class MpiWorld {
 public:
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  // Whether this process was started by mpirun (Open MPI sets
  // OMPI_COMM_WORLD_SIZE in every rank's environment).
  static bool launched_by_mpirun();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // Rank among the ranks on this node; it picks the node's GPU.
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  const std::string& host() const noexcept { return host_; }
  MPI_Comm communicator() const noexcept { return MPI_COMM_WORLD; }

  void broadcast_bytes(void* data, std::size_t bytes, int root) const;
  // Every rank's `value` in rank order on `root`; empty on the other ranks.
  std::vector<nlohmann::json> gather(const nlohmann::json& value, int root) const;
  // Every rank's `value` in rank order, on every rank.
  std::vector<uint64_t> all_gather(uint64_t value) const;
  // Returns when every rank has called it.
  void barrier() const;
  // The element-wise maximum of every rank's `values` (same length on all), on every rank.
  std::vector<double> all_reduce_max(std::vector<double> values) const;
  // Ends every rank of the job with `code`: a failed rank must not leave
  // the others waiting in a collective until the job's timeout.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
};

}  // namespace ts::worker
