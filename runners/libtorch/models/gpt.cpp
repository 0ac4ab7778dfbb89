#include "runners/libtorch/models/gpt.hpp"

#include "shared/errors.hpp"

namespace ts::worker {

namespace nn = torch::nn;

GptImpl::GptImpl(int64_t vocab, int64_t seq_len, int64_t width, int64_t depth, int64_t heads) {
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
  return model;
}

}  // namespace ts::worker
