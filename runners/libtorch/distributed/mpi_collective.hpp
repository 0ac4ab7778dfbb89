#pragma once
// Collectives on CPU tensors through MPI's non-blocking all-reduce.
#include "runners/libtorch/distributed/collective.hpp"
#include "runners/libtorch/distributed/mpi_world.hpp"

namespace ts::worker {

class MpiCollective final : public Collective {
 public:
  explicit MpiCollective(const MpiWorld& world) : world_(world) {}
  int rank() const override { return world_.rank(); }
  int size() const override { return world_.size(); }
  std::string backend() const override { return "mpi"; }
  std::unique_ptr<PendingCollective> start_all_reduce_sum(const torch::Tensor& tensor) override;
  void broadcast(const torch::Tensor& tensor, int root) override;
  std::vector<double> take_all_reduce_seconds() override;

 private:
  const MpiWorld& world_;
  // Shared with each pending all-reduce, which writes its duration into its
  // slot when it completes.
  std::shared_ptr<std::vector<double>> seconds_ = std::make_shared<std::vector<double>>();
};

}  // namespace ts::worker
