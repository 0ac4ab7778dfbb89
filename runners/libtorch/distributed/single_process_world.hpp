#pragma once
// This process as a world of one rank: a job that asks data_parallel:
// always runs its one-rank data-parallel path (the collective, bucketed
// all-reduces, the distributed report) without mpirun or MPI, e.g. a
// one-rank NCCL communicator on a GPU node that has no MPI.
#include "runners/libtorch/distributed/world.hpp"

namespace ts::worker {

class SingleProcessWorld final : public World {
 public:
  SingleProcessWorld();
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  const std::string& host() const override { return host_; }

  // With one rank every exchange is with itself: what it gives is what it gets.
  void broadcast_bytes(void*, std::size_t, int) const override {}
  std::vector<nlohmann::json> gather(const nlohmann::json& value, int) const override { return {value}; }
  std::vector<uint64_t> all_gather(uint64_t value) const override { return {value}; }
  void barrier() const override {}
  std::vector<double> all_reduce_max(std::vector<double> values) const override { return values; }
  [[noreturn]] void abort(int code) const override;

 private:
  std::string host_;
};

}  // namespace ts::worker
