#include "runners/libtorch/distributed/nccl_collective.hpp"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <stdexcept>
#include <thread>

#include "runners/libtorch/device.hpp"

namespace ts::worker {
namespace {

void check(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) throw std::runtime_error(std::string(call) + " failed: " + ncclGetErrorString(result));
}

ncclDataType_t nccl_type_of(const torch::Tensor& tensor) {
  if (!tensor.is_cuda()) throw Unsupported("the NCCL collective reduces CUDA tensors only");
  if (!tensor.is_contiguous()) throw std::logic_error("NCCL collectives need contiguous tensors");
  switch (tensor.scalar_type()) {
    case torch::kFloat:
      return ncclFloat32;
    case torch::kDouble:
      return ncclFloat64;
    case torch::kHalf:
      return ncclFloat16;
    case torch::kBFloat16:
      return ncclBfloat16;
    case torch::kLong:
      return ncclInt64;
    case torch::kByte:
      return ncclUint8;
    default:
      throw Unsupported(std::string("NCCL has no reduction for ") + std::string(c10::toString(tensor.scalar_type())) +
                        " tensors");
  }
}

class NcclPending final : public PendingCollective {
 public:
  NcclPending(at::cuda::CUDAEvent& done, torch::Device device) : done_(done), device_(device) {}
  void wait() override { done_.block(c10::cuda::getCurrentCUDAStream(device_.index())); }
  void poll() override {}  // NCCL progresses on the device by itself

 private:
  at::cuda::CUDAEvent& done_;
  torch::Device device_;
};

}  // namespace

NcclCollective::NcclCollective(const World& world, torch::Device device)
    : world_(world), device_(device), stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, device.index())) {
  ncclUniqueId id;
  if (world.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  world.broadcast_bytes(&id, sizeof id, 0);
  c10::cuda::CUDAGuard guard(device_);
  check(ncclCommInitRank(&communicator_, world.size(), id, world.rank()), "ncclCommInitRank");
}

NcclCollective::~NcclCollective() {
  if (communicator_ == nullptr) return;  // aborted: its stream may never finish
  stream_.synchronize();
  ncclCommDestroy(communicator_);
}

void NcclCollective::abort(const std::string& reason) {
  ncclCommAbort(communicator_);
  communicator_ = nullptr;
  throw std::runtime_error(reason);
}

void NcclCollective::settle() {
  if (communicator_ == nullptr) throw std::logic_error("the NCCL communicator was aborted");
  if (used_ == 0) return;
  const auto& last = slots_[used_ - 1]->done;  // the communication stream runs its all-reduces in order
  const auto deadline = std::chrono::steady_clock::now() + settle_deadline;
  while (!last.query()) {
    ncclResult_t state = ncclSuccess;
    check(ncclCommGetAsyncError(communicator_, &state), "ncclCommGetAsyncError");
    if (state != ncclSuccess && state != ncclInProgress) {
      abort(std::string("NCCL all-reduce failed on rank ") + std::to_string(world_.rank()) + ": " +
            ncclGetErrorString(state) + " (another rank gone?)");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      abort("an NCCL all-reduce did not finish within " + std::to_string(settle_deadline.count()) + " s on rank " +
            std::to_string(world_.rank()) + ": a rank is gone or stuck");
    }
    std::this_thread::yield();
  }
}

NcclCollective::Slot& NcclCollective::next_slot() {
  if (used_ == slots_.size()) expect_all_reduces(used_ + 1);  // more than announced: made here, as a last resort
  return *slots_[used_++];
}

void NcclCollective::expect_all_reduces(std::size_t count) {
  c10::cuda::CUDAGuard guard(device_);
  while (slots_.size() < count) {
    auto slot = std::make_unique<Slot>();
    // CUDA makes an event at its first record.
    for (auto* event : {&slot->ready, &slot->start, &slot->end, &slot->done}) event->record(stream_);
    slots_.push_back(std::move(slot));
  }
  stream_.synchronize();
}

std::unique_ptr<PendingCollective> NcclCollective::start_all_reduce_sum(const torch::Tensor& tensor) {
  const auto type = nccl_type_of(tensor);
  c10::cuda::CUDAGuard guard(device_);
  auto& slot = next_slot();
  slot.ready.record(c10::cuda::getCurrentCUDAStream(device_.index()));
  slot.ready.block(stream_);
  slot.start.record(stream_);
  check(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<std::size_t>(tensor.numel()), type, ncclSum,
                      communicator_, stream_.stream()),
        "ncclAllReduce");
  slot.end.record(stream_);
  // The caching allocator must not hand the buffer out again before the
  // communication stream is done with it.
  c10::cuda::CUDACachingAllocator::recordStream(tensor.storage().data_ptr(), stream_);
  slot.done.record(stream_);
  return std::make_unique<NcclPending>(slot.done, device_);
}

void NcclCollective::broadcast(const torch::Tensor& tensor, int root) {
  const auto type = nccl_type_of(tensor);
  c10::cuda::CUDAGuard guard(device_);
  check(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), static_cast<std::size_t>(tensor.numel()), type, root,
                      communicator_, c10::cuda::getCurrentCUDAStream(device_.index()).stream()),
        "ncclBroadcast");
}

std::vector<double> NcclCollective::take_all_reduce_seconds() {
  std::vector<double> seconds;
  for (std::size_t i = 0; i < used_; ++i) seconds.push_back(slots_[i]->start.elapsed_time(slots_[i]->end) / 1000.0);
  used_ = 0;
  return seconds;
}

}  // namespace ts::worker
