#include "runners/libtorch/models/transformer.hpp"

#include <cmath>
#include <limits>

#include "shared/errors.hpp"

namespace ts::worker {

namespace nn = torch::nn;

namespace {
// x @ W^T without the bias, which the caller adds inside its own chain.
torch::Tensor weight_only(const torch::Tensor& x, const nn::Linear& linear) {
  return torch::matmul(x, linear->weight.t());
}
}  // namespace

EncoderBlockImpl::EncoderBlockImpl(int64_t width, int64_t heads_, bool causal_)
    : heads(heads_),
      causal(causal_),
      ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({width})))),
      ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({width})))),
      qkv(register_module("qkv", nn::Linear(width, 3 * width))),
      proj(register_module("proj", nn::Linear(width, width))),
      fc1(register_module("fc1", nn::Linear(width, 4 * width))),
      fc2(register_module("fc2", nn::Linear(4 * width, width))) {}

torch::Tensor EncoderBlockImpl::forward(const torch::Tensor& x) {
  const auto q_k_v = queries_keys_values(x);
  const auto seq = x.size(1);
  const auto later = causal ? torch::ones({seq, seq}, x.options().dtype(torch::kBool)).triu(1) : torch::Tensor();
  return attend(x, q_k_v[0], q_k_v[1], q_k_v[2], later);
}

torch::Tensor EncoderBlockImpl::forward_cached(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values,
                                               int64_t start) {
  const auto q_k_v = queries_keys_values(x);
  const auto seq = x.size(1), end = start + seq;
  keys.slice(2, start, end).copy_(q_k_v[1]);
  values.slice(2, start, end).copy_(q_k_v[2]);
  // Position start + i sees the cache up to itself: a decode step (one position) sees all of it.
  const auto later =
      seq > 1 ? torch::ones({seq, end}, x.options().dtype(torch::kBool)).triu(start + 1) : torch::Tensor();
  return attend(x, q_k_v[0], keys.slice(2, 0, end), values.slice(2, 0, end), later);
}

torch::Tensor EncoderBlockImpl::queries_keys_values(const torch::Tensor& x) {
  const auto batch = x.size(0), seq = x.size(1), width = x.size(2);
  return qkv(ln1(x)).view({batch, seq, 3, heads, width / heads}).permute({2, 0, 3, 1, 4});
}

torch::Tensor EncoderBlockImpl::attend(const torch::Tensor& x, const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v, const torch::Tensor& later) {
  const auto batch = x.size(0), seq = x.size(1), width = x.size(2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(width / heads)));
  if (later.defined()) scores = scores.masked_fill(later, -std::numeric_limits<double>::infinity());
  auto attended = torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({batch, seq, width});
  auto h = x + (weight_only(attended, proj) + proj->bias);
  auto hidden = torch::gelu(weight_only(ln2(h), fc1) + fc1->bias);
  return h + (weight_only(hidden, fc2) + fc2->bias);
}

TransformerImpl::TransformerImpl(int64_t seq_len, int64_t width, int64_t depth, int64_t heads, int64_t num_classes)
    : blocks(register_module("blocks", nn::ModuleList())) {
  // Built in the Python runners' order (blocks, final norm, head, positions),
  // so the seeded generator hands both the same initial weights.
  for (int64_t i = 0; i < depth; ++i) blocks->push_back(EncoderBlock(width, heads));
  ln_final = register_module("ln_final", nn::LayerNorm(nn::LayerNormOptions({width})));
  head = register_module("head", nn::Linear(width, num_classes));
  positions = register_parameter("positions", torch::randn({seq_len, width}) * 0.02);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& x) {
  auto h = x + positions;
  for (const auto& block : *blocks) h = block->as<EncoderBlock>()->forward(h);
  return head(ln_final(h).mean(1));
}

Model build_transformer(const ModelConfig& config) {
  if (config.width % config.heads != 0) {
    throw InvalidInput("heads",
                       "must divide width (" + std::to_string(config.width) + "), got " + std::to_string(config.heads));
  }
  Transformer net(config.seq_len, config.width, config.depth, config.heads, config.num_classes);
  return Model{net.ptr(),
               [net](const torch::Tensor& x) mutable { return net->forward(x); },
               {config.seq_len, config.width},
               config.num_classes};
}

}  // namespace ts::worker
