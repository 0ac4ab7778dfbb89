#pragma once
// Keeping data-parallel replicas identical: the same starting state on every
// rank, and a checksum to show they are still bitwise the same at the end.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "runners/libtorch/distributed/collective.hpp"

namespace ts::worker {

// Copies rank `root`'s values of `tensors` into every rank's.
void broadcast_tensors(const std::vector<torch::Tensor>& tensors, Collective& collective, int root);

// FNV-1a over the bytes of `tensors`, in order.
uint64_t checksum(const std::vector<torch::Tensor>& tensors);

}  // namespace ts::worker
