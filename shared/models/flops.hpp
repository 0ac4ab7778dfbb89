#pragma once
// The FLOPs of a model, counted analytically from per-layer formulas
// (docs/methodology.md, "How close to the machine's limit"). The convention
// is torch.utils.flop_counter's and the MFU literature's: a multiply-add of
// a matrix product or a convolution is 2 FLOPs, and nothing else counts
// (normalisation, activations, pooling, softmax, the loss and the optimizer
// are left out). A training step counts 3 forwards (the backward pass is
// about twice the forward), an inference step one. The same count serves
// every runner and framework: it is a property of the model and its input,
// not of who runs it.
#include <nlohmann/json.hpp>

namespace ts::models {

// FLOPs of one forward pass of one sample of `job`'s model, knobs resolved
// as models::knobs_of does. Throws ts::InvalidInput for an unknown model
// and for one without a formula (a library's, the user's).
double forward_flops_per_sample(const nlohmann::json& job);

struct StepFlops {
  double forward_per_sample = 0;
  double per_step = 0;  // of the whole job: batch_size x ranks samples, x3 when training
};
StepFlops step_flops(const nlohmann::json& job);

}  // namespace ts::models
