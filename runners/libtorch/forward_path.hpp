#pragma once
// How a model's forward runs: eagerly, or as a captured TorchScript graph
// executed by the JIT graph executor with its fusers on.
#include <torch/torch.h>

#include <memory>
#include <string>

#include "runners/libtorch/models/model.hpp"
#include "runners/libtorch/precision.hpp"

namespace ts::worker {

class ForwardPath {
 public:
  virtual ~ForwardPath() = default;
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
  virtual std::string compiler() const = 0;
};

// The module as written, under autocast when the plan asks for it.
std::unique_ptr<ForwardPath> make_eager_path(Model& model, const PrecisionPlan& plan);

// Traces `model` on `example` with the input, every parameter and every
// buffer as graph inputs, then runs that graph through a GraphFunction.
// Gradients therefore reach the module's own parameters and in-place buffer
// updates (BatchNorm running statistics) land in its own buffers. The trace
// is taken under the plan's autocast, which records the casts into the
// graph; the graph then runs with autocast off. Buffers are restored after
// tracing so capture does not advance the running statistics.
std::unique_ptr<ForwardPath> capture_torchscript(Model& model, const torch::Tensor& example, const PrecisionPlan& plan);

// Turns on the TensorExpr (NNC) fuser, on CPU too (off by default there)
// where this LibTorch can generate CPU code. NNC's reductions (softmax into
// a group) stay off: on LibTorch 2.6 CPU a fused softmax kernel was seen to
// spin forever.
void enable_fusers();

// Whether NNC can fuse on the CPU here: it generates CPU code with LLVM,
// which Debian's LibTorch is built with and the package index's wheels are
// not (there a fused group fails at its first run: "LLVM Backend not
// found"). Asked once, by running a small scripted function past the
// profiling executor's profiling runs.
bool cpu_fusion_available();

}  // namespace ts::worker
