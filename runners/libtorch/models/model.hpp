#pragma once
// What the benchmark harness needs of a model: the module (for parameters,
// buffers, train/eval and device moves), how to call it, and what it eats.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ts::worker {

// The size knobs of a job; which ones a model reads is listed in its
// ModelInfo::knobs and documented in docs/worker.md.
struct ModelConfig {
  int64_t input_size = 0;
  int64_t num_classes = 0;
  int64_t width = 0;
  int64_t depth = 0;
  int64_t heads = 0;
  int64_t seq_len = 0;
  int64_t vocab = 0;
};

// A decoder's key/value cache (task generate): per block, keys and values
// [batch, heads, length, head_dim] allocated for the whole generation, the
// first `filled` positions written.
struct KeyValueCache {
  std::vector<torch::Tensor> keys, values;
  int64_t filled = 0;
};

struct Model {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::vector<int64_t> sample_shape;  // one input sample, without the batch dimension
  int64_t num_classes = 0;
  // A language model's: a sample is sample_shape token ids in [0,
  // num_classes), its targets the ids that follow each (int64, the same
  // shape), its output logits over them for every position.
  bool tokens = false;
  // A decoder's (task generate; empty for the others): the cache for
  // `length` positions of a batch, and the logits at the last position of
  // `ids` [batch, n] fed at the cache's next n positions, which it writes.
  std::function<KeyValueCache(int64_t batch, int64_t length, torch::Dtype dtype)> make_cache{};
  std::function<torch::Tensor(const torch::Tensor& ids, KeyValueCache& cache)> forward_cached{};
};

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace ts::worker
