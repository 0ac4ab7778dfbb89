#pragma once
// A small pre-norm Transformer encoder classifier over continuous features
// (as after a ViT patch embedding): learned positions, blocks of
// x + Attention(LN(x)) and x + MLP(LN(x)) with a 4x GELU MLP, a final
// LayerNorm, mean pooling and a linear head. Attention is written out
// (scale, softmax, matmuls), and so are the bias adds after the projection
// and the MLP's matmuls: bias + GELU and bias + residual are the elementwise
// chains fusers join (as Megatron's fused bias-GELU and bias-add kernels do).
// The Linear modules still hold the weights, so names and counts are those
// of an ordinary nn.Linear block. A causal block (the decoder's, gpt.hpp)
// masks each position's attention to the positions before it.
#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

struct EncoderBlockImpl : torch::nn::Module {
  EncoderBlockImpl(int64_t width, int64_t heads, bool causal = false);
  torch::Tensor forward(const torch::Tensor& x);
  // A causal block's step of generation: x's keys and values written into
  // the cache at positions [start, start + x.size(1)), then attention over
  // the cache's first start + x.size(1) positions (each to those up to its own).
  torch::Tensor forward_cached(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values, int64_t start);

  int64_t heads;
  bool causal;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};

 private:
  // q, k, v [3, batch, heads, seq, head_dim] of x.
  torch::Tensor queries_keys_values(const torch::Tensor& x);
  // The rest of the block: attention of q over k and v (`later`: the pairs masked, if defined), the MLP.
  torch::Tensor attend(const torch::Tensor& x, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& later);
};
TORCH_MODULE(EncoderBlock);

struct TransformerImpl : torch::nn::Module {
  TransformerImpl(int64_t seq_len, int64_t width, int64_t depth, int64_t heads, int64_t num_classes);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor positions;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_final{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Transformer);

Model build_transformer(const ModelConfig& config);

}  // namespace ts::worker
