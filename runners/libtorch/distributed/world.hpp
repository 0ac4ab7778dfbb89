#pragma once
// The ranks of one data-parallel job and the few host-side exchanges the
// worker needs besides gradient all-reduce (the NCCL unique id, per-rank
// reports, replica checksums, the slowest rank's epoch times): the ranks
// mpirun started (mpi_world.hpp), or this process alone
// (single_process_world.hpp), whose one-rank NCCL communicator needs no MPI.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::worker {

class World {
 public:
  virtual ~World() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the ranks on this node; it picks the node's GPU.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual const std::string& host() const = 0;

  virtual void broadcast_bytes(void* data, std::size_t bytes, int root) const = 0;
  // Every rank's `value` in rank order on `root`; empty on the other ranks.
  virtual std::vector<nlohmann::json> gather(const nlohmann::json& value, int root) const = 0;
  // Every rank's `value` in rank order, on every rank.
  virtual std::vector<uint64_t> all_gather(uint64_t value) const = 0;
  // Returns when every rank has called it.
  virtual void barrier() const = 0;
  // The element-wise maximum of every rank's `values` (same length on all), on every rank.
  virtual std::vector<double> all_reduce_max(std::vector<double> values) const = 0;
  // Ends every rank of the job with `code`: a failed rank must not leave
  // the others waiting in a collective until the job's timeout.
  [[noreturn]] virtual void abort(int code) const = 0;
};

// Whether this process is a rank mpirun started (Open MPI sets
// OMPI_COMM_WORLD_SIZE in every rank's environment).
bool launched_by_mpirun();

}  // namespace ts::worker
