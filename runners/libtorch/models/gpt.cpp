#include "runners/libtorch/models/gpt.hpp"

#include "shared/errors.hpp"

namespace ts::worker {

namespace nn = torch::nn;

GptImpl::GptImpl(int64_t vocab, int64_t seq_len, int64_t width, int64_t depth, int64_t heads_) : heads(heads_) {
  // Built in the torch.compile runner's order, so the seeded generator hands both the same initial weights.
  tokens = register_module("tokens", nn::Embedding(vocab, width));
  {
    torch::NoGradGuard no_grad;
    nn::init::normal_(tokens->weight, 0.0, 0.02);
  }
  positions = register_parameter("positions", torch::randn({seq_len, width}) * 0.02);
  blocks = register_module("blocks", nn::ModuleList());
  for (int64_t i = 0; i < depth; ++i) blocks->push_back(EncoderBlock(width, heads, /*causal=*/true));
  ln_final = register_module("ln_final", nn::LayerNorm(nn::LayerNormOptions({width})));
  head = register_module("head", nn::Linear(nn::LinearOptions(width, vocab).bias(false)));
}

KeyValueCache GptImpl::make_cache(int64_t batch, int64_t length, torch::Dtype dtype) {
  const auto width = positions.size(1);
  const auto options = positions.options().dtype(dtype);
  KeyValueCache cache;
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    cache.keys.push_back(torch::zeros({batch, heads, length, width / heads}, options));
    cache.values.push_back(torch::zeros({batch, heads, length, width / heads}, options));
  }
  return cache;
}

torch::Tensor GptImpl::forward_cached(const torch::Tensor& ids, KeyValueCache& cache) {
  const auto start = cache.filled, end = start + ids.size(1);
  auto h = tokens(ids) + positions.slice(0, start, end);
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    h = blocks[i]->as<EncoderBlock>()->forward_cached(h, cache.keys[i], cache.values[i], start);
  }
  cache.filled = end;
  return head(ln_final(h.select(1, -1)));
}

torch::Tensor GptImpl::forward(const torch::Tensor& ids) {
  auto h = tokens(ids) + positions.slice(0, 0, ids.size(1));
  for (const auto& block : *blocks) h = block->as<EncoderBlock>()->forward(h);
  return head(ln_final(h));
}

Model build_gpt(const ModelConfig& config) {
  if (config.width % config.heads != 0) {
    throw InvalidInput("heads",
                       "must divide width (" + std::to_string(config.width) + "), got " + std::to_string(config.heads));
  }
  Gpt net(config.vocab, config.seq_len, config.width, config.depth, config.heads);
  Model model{
      net.ptr(), [net](const torch::Tensor& ids) mutable { return net->forward(ids); }, {config.seq_len}, config.vocab};
  model.tokens = true;
  model.make_cache = [net](int64_t batch, int64_t length, torch::Dtype dtype) mutable {
    return net->make_cache(batch, length, dtype);
  };
  model.forward_cached = [net](const torch::Tensor& ids, KeyValueCache& cache) mutable {
    return net->forward_cached(ids, cache);
  };
  return model;
}

}  // namespace ts::worker
