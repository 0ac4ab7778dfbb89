#pragma once
// The ranks of one multi-rank job, as Open MPI's mpirun started them
// (launched_by_mpirun): MPI is initialised for the life of this object.
// Plain MPI C calls, as nccl-tests bootstraps NCCL. Compiled only with MPI
// (TORCHSWEEP_WITH_MPI).
#include <mpi.h>

#include "runners/libtorch/distributed/world.hpp"

namespace ts::worker {

class MpiWorld final : public World {
 public:
  MpiWorld();
  ~MpiWorld() override;
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  const std::string& host() const override { return host_; }
  MPI_Comm communicator() const noexcept { return MPI_COMM_WORLD; }

  void broadcast_bytes(void* data, std::size_t bytes, int root) const override;
  std::vector<nlohmann::json> gather(const nlohmann::json& value, int root) const override;
  std::vector<uint64_t> all_gather(uint64_t value) const override;
  void barrier() const override;
  std::vector<double> all_reduce_max(std::vector<double> values) const override;
  [[noreturn]] void abort(int code) const override;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
};

}  // namespace ts::worker
