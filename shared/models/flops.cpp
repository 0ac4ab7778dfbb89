#include "shared/models/flops.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/models/catalogue.hpp"

namespace ts::models {
namespace {

// A multiply-add is 2 FLOPs; an n x k by k x m product has n*k*m of them.
double matmul(double n, double k, double m) { return 2 * n * k * m; }

// Output size of a convolution or pooling window along one dimension.
int64_t out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

// A square convolution without groups over an h x h input, whose output
// size it returns through `h`.
double conv(int64_t& h, int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding) {
  h = out_size(h, kernel, stride, padding);
  return matmul(static_cast<double>(h) * h, static_cast<double>(in_channels) * kernel * kernel, out_channels);
}

double mlp(const std::map<std::string, int64_t>& k) {
  const auto width = k.at("width");
  double flops = 0;
  for (int64_t i = 0; i < k.at("depth"); ++i) flops += matmul(1, i == 0 ? k.at("input_size") : width, width);
  return flops + matmul(1, width, k.at("num_classes"));
}

// Per block over a sequence: qkv, q k^T, attention x v, the projection
// and the 4x MLP; 24 seq width^2 + 4 seq^2 width. The causal mask does not
// halve the attention terms: the whole product is computed, then masked.
double block(double seq, double width) {
  return matmul(seq, width, 3 * width) + matmul(seq, width, seq) + matmul(seq, seq, width) +
         matmul(seq, width, width) + matmul(seq, width, 4 * width) + matmul(seq, 4 * width, width);
}

// The blocks, then the head on the mean over the sequence.
double transformer(const std::map<std::string, int64_t>& k) {
  const double width = k.at("width");
  return k.at("depth") * block(k.at("seq_len"), width) + matmul(1, width, k.at("num_classes"));
}

// The blocks, then the LM head at every position (the embedding lookups
// multiply nothing). Per token: 2 N of the blocks' and head's weights plus
// the attention term 4 seq width per block (docs/language-models.md).
double gpt(const std::map<std::string, int64_t>& k) {
  const double seq = k.at("seq_len"), width = k.at("width");
  return k.at("depth") * block(seq, width) + matmul(seq, width, k.at("vocab"));
}

// torchvision's ResNet v1.5: the 7x7 stem and max pool, four stages of
// basic blocks (resnet18) or bottlenecks (resnet50) whose first block
// strides (but the first stage's) and projects when the shape changes,
// and the classifier on the pooled features.
double resnet(const std::map<std::string, int64_t>& k, bool bottleneck) {
  constexpr std::array<int64_t, 4> planes{64, 128, 256, 512};
  const std::array<int64_t, 4> blocks =
      bottleneck ? std::array<int64_t, 4>{3, 4, 6, 3} : std::array<int64_t, 4>{2, 2, 2, 2};
  const int64_t expansion = bottleneck ? 4 : 1;
  int64_t h = k.at("input_size");
  double flops = conv(h, 3, 64, 7, 2, 3);
  h = out_size(h, 3, 2, 1);  // max pool
  int64_t inplanes = 64;
  for (std::size_t stage = 0; stage < planes.size(); ++stage) {
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = b == 0 && stage > 0 ? 2 : 1;
      const int64_t width = planes[stage], out = width * expansion;
      int64_t projected = h;
      if (stride != 1 || inplanes != out) flops += conv(projected, inplanes, out, 1, stride, 0);
      if (bottleneck) {
        flops += conv(h, inplanes, width, 1, 1, 0);
        flops += conv(h, width, width, 3, stride, 1);
        flops += conv(h, width, out, 1, 1, 0);
      } else {
        flops += conv(h, inplanes, width, 3, stride, 1);
        flops += conv(h, width, width, 3, 1, 1);
      }
      inplanes = out;
    }
  }
  return flops + matmul(1, static_cast<double>(inplanes), k.at("num_classes"));
}

}  // namespace

double forward_flops_per_sample(const nlohmann::json& job) {
  const auto knobs = knobs_of(job);
  const auto model = job.at("model").get<std::string>();
  if (model == "mlp") return mlp(knobs);
  if (model == "transformer") return transformer(knobs);
  if (model == "gpt") return gpt(knobs);
  if (model == "resnet18" || model == "resnet50") return resnet(knobs, model == "resnet50");
  throw InvalidInput("model", "no FLOP formula for model '" + model + "' (shared/models/flops.cpp)");
}

StepFlops step_flops(const nlohmann::json& job) {
  StepFlops flops;
  flops.forward_per_sample = forward_flops_per_sample(job);
  const double samples = job.at("batch_size").get<double>() * job_fields::get<int64_t>(job, "gpus");
  flops.per_step = flops.forward_per_sample * samples * (job_fields::get<std::string>(job, "task") == "train" ? 3 : 1);
  return flops;
}

}  // namespace ts::models
