#pragma once
// Where batches come from. Synthetic data is generated on the device before
// timing, so the timed epochs measure compute, not I/O; imagefolder data
// (image_folder.hpp) is read and decoded while they run.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace ts::worker {

struct Batch {
  torch::Tensor inputs;   // float32, [batch, sample_shape...]; a language model's: int64 token ids
  torch::Tensor targets;  // int64 class indices, [batch]; a language model's: the next ids, as inputs
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual const Batch& next() = 0;
  // The batch next() returns, without advancing (an example for capture).
  virtual const Batch& peek() = 0;
  virtual std::string name() const = 0;
};

// `batches` distinct random batches (standard normal inputs, uniform
// targets) from the device's default generator seeded with `seed`, cycled.
// For a language model (`tokens`), uniform token ids in [0, num_classes)
// one longer than the sample, inputs all but the last, targets all but the
// first: the next token at every position. Image inputs are laid out in
// `layout` (the values do not depend on it).
class SyntheticData final : public DataSource {
 public:
  SyntheticData(int64_t batch_size, const std::vector<int64_t>& sample_shape, int64_t num_classes, int64_t batches,
                int64_t seed, const torch::Device& device, bool tokens = false,
                torch::MemoryFormat layout = torch::MemoryFormat::Contiguous);
  const Batch& next() override;
  const Batch& peek() override { return batches_[position_]; }
  std::string name() const override { return "synthetic"; }

 private:
  std::vector<Batch> batches_;
  std::size_t position_ = 0;
};

}  // namespace ts::worker
