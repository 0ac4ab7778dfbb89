#include "runners/libtorch/data/synthetic_data.hpp"

namespace ts::worker {

SyntheticData::SyntheticData(int64_t batch_size, const std::vector<int64_t>& sample_shape, int64_t num_classes,
                             int64_t batches, int64_t seed, const torch::Device& device, bool tokens,
                             torch::MemoryFormat layout) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  std::vector<int64_t> shape{batch_size};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  const auto options = torch::TensorOptions().device(device);
  for (int64_t i = 0; i < batches && tokens; ++i) {
    auto longer = shape;
    longer.back() += 1;
    const auto ids = torch::randint(num_classes, longer, options.dtype(torch::kLong));
    batches_.push_back({ids.narrow(-1, 0, shape.back()).contiguous(), ids.narrow(-1, 1, shape.back()).contiguous()});
  }
  for (int64_t i = 0; i < batches && !tokens; ++i) {
    batches_.push_back({torch::randn(shape, options.dtype(torch::kFloat)).contiguous(layout),
                        torch::randint(num_classes, {batch_size}, options.dtype(torch::kLong))});
  }
}

const Batch& SyntheticData::next() {
  const auto& batch = batches_[position_];
  position_ = (position_ + 1) % batches_.size();
  return batch;
}

}  // namespace ts::worker
