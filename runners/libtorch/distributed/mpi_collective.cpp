#include "runners/libtorch/distributed/mpi_collective.hpp"

#include <chrono>
#include <stdexcept>

#include "runners/libtorch/device.hpp"

namespace ts::worker {
namespace {

using Clock = std::chrono::steady_clock;

MPI_Datatype mpi_type_of(const torch::Tensor& tensor) {
  if (!tensor.device().is_cpu()) {
    throw Unsupported("the MPI collective reduces CPU tensors only; CUDA tensors go through NCCL");
  }
  if (!tensor.is_contiguous()) throw std::logic_error("MPI collectives need contiguous tensors");
  switch (tensor.scalar_type()) {
    case torch::kFloat:
      return MPI_FLOAT;
    case torch::kDouble:
      return MPI_DOUBLE;
    case torch::kLong:
      return MPI_INT64_T;
    case torch::kByte:
      return MPI_UINT8_T;
    default:
      throw Unsupported(std::string("MPI has no reduction for ") + std::string(c10::toString(tensor.scalar_type())) +
                        " tensors");
  }
}

class MpiPending final : public PendingCollective {
 public:
  MpiPending(torch::Tensor tensor, MPI_Request request, std::shared_ptr<std::vector<double>> seconds)
      : tensor_(std::move(tensor)), request_(request), seconds_(std::move(seconds)), slot_(seconds_->size()) {
    seconds_->push_back(0.0);
  }
  ~MpiPending() override {
    // A reduction left behind by an exception still owns our buffer.
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  void wait() override {
    if (request_ == MPI_REQUEST_NULL) return;
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
    completed();
  }
  void poll() override {
    if (request_ == MPI_REQUEST_NULL) return;
    int done = 0;
    MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (done != 0) completed();
  }

 private:
  void completed() {
    if (slot_ < seconds_->size()) (*seconds_)[slot_] = std::chrono::duration<double>(Clock::now() - started_).count();
  }

  torch::Tensor tensor_;  // keeps the buffer alive while MPI uses it
  MPI_Request request_;
  std::shared_ptr<std::vector<double>> seconds_;
  std::size_t slot_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace

std::unique_ptr<PendingCollective> MpiCollective::start_all_reduce_sum(const torch::Tensor& tensor) {
  const auto type = mpi_type_of(tensor);
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), static_cast<int>(tensor.numel()), type, MPI_SUM,
                                  world_.communicator(), &request);
  if (code != MPI_SUCCESS) throw std::runtime_error("MPI_Iallreduce failed with code " + std::to_string(code));
  return std::make_unique<MpiPending>(tensor, request, seconds_);
}

void MpiCollective::broadcast(const torch::Tensor& tensor, int root) {
  mpi_type_of(tensor);
  world_.broadcast_bytes(tensor.data_ptr(), tensor.nbytes(), root);
}

std::vector<double> MpiCollective::take_all_reduce_seconds() { return std::exchange(*seconds_, {}); }

}  // namespace ts::worker
