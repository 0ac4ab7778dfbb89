#include "runners/libtorch/distributed/module_state.hpp"

namespace ts::worker {

void broadcast_tensors(const std::vector<torch::Tensor>& tensors, Collective& collective, int root) {
  torch::NoGradGuard no_grad;
  for (auto tensor : tensors) {
    if (tensor.is_contiguous()) {
      collective.broadcast(tensor, root);
    } else {
      auto copy = tensor.contiguous();
      collective.broadcast(copy, root);
      tensor.copy_(copy);
    }
  }
}

uint64_t checksum(const std::vector<torch::Tensor>& tensors) {
  uint64_t hash = 14695981039346656037ULL;
  for (const auto& tensor : tensors) {
    const auto bytes = tensor.detach().to(torch::kCPU).contiguous();
    const auto* data = static_cast<const unsigned char*>(bytes.data_ptr());
    for (std::size_t i = 0; i < bytes.nbytes(); ++i) {
      hash ^= data[i];
      hash *= 1099511628211ULL;
    }
  }
  return hash;
}

}  // namespace ts::worker
