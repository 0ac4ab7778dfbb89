#pragma once
// A GPT-style decoder (docs/language-models.md): token embeddings plus
// learned positions, causal pre-norm blocks (transformer.hpp's, masked),
// a final LayerNorm and an LM head without bias, not tied to the token
// embeddings (so every framework holds the same separate tensors). Token
// ids in, logits over the vocabulary at every position out; trained on the
// next token. Embeddings and positions start as GPT-2's, N(0, 0.02).
#include "runners/libtorch/models/model.hpp"
#include "runners/libtorch/models/transformer.hpp"

namespace ts::worker {

struct GptImpl : torch::nn::Module {
  GptImpl(int64_t vocab, int64_t seq_len, int64_t width, int64_t depth, int64_t heads);
  torch::Tensor forward(const torch::Tensor& ids);
  KeyValueCache make_cache(int64_t batch, int64_t length, torch::Dtype dtype);
  // Logits at the last position of `ids`, fed at the cache's next positions.
  torch::Tensor forward_cached(const torch::Tensor& ids, KeyValueCache& cache);

  torch::nn::Embedding tokens{nullptr};
  torch::Tensor positions;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_final{nullptr};
  torch::nn::Linear head{nullptr};
  int64_t heads = 0;
};
TORCH_MODULE(Gpt);

Model build_gpt(const ModelConfig& config);

}  // namespace ts::worker
