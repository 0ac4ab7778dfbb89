#include "runners/libtorch/forward_path.hpp"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/jit.h>

#include "runners/libtorch/compat.hpp"

namespace ts::worker {
namespace {

class EagerPath final : public ForwardPath {
 public:
  EagerPath(Model& model, const PrecisionPlan& plan) : model_(model), plan_(plan) {}
  torch::Tensor forward(const torch::Tensor& input) override {
    AutocastScope autocast(plan_);
    return model_.forward(input);
  }
  std::string compiler() const override { return "none"; }

 private:
  Model& model_;
  PrecisionPlan plan_;
};

class TorchScriptPath final : public ForwardPath {
 public:
  TorchScriptPath(Model& model, const torch::Tensor& example, const PrecisionPlan& plan)
      : parameters_(model.module->parameters()), buffers_(model.module->buffers()) {
    std::vector<torch::Tensor> saved_buffers;
    {
      torch::NoGradGuard no_grad;
      for (const auto& buffer : buffers_) saved_buffers.push_back(buffer.clone());
    }
    auto traced = [&model, &plan](torch::jit::Stack inputs) -> torch::jit::Stack {
      AutocastScope autocast(plan);
      return {model.forward(inputs.at(0).toTensor())};
    };
    auto [state, outputs] = torch::jit::tracer::trace(
        stack_for(example), traced, [](const torch::autograd::Variable&) { return std::string(); },
        /*strict=*/false, /*force_outplace=*/false);
    {
      torch::NoGradGuard no_grad;
      for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].copy_(saved_buffers[i]);
    }
    function_ = std::make_unique<torch::jit::GraphFunction>("forward", state->graph, nullptr);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    auto stack = stack_for(input);
    return (*function_)(std::move(stack)).toTensor();
  }
  std::string compiler() const override { return "torchscript-nnc"; }

 private:
  torch::jit::Stack stack_for(const torch::Tensor& input) const {
    torch::jit::Stack stack;
    stack.reserve(1 + parameters_.size() + buffers_.size());
    stack.emplace_back(input);
    for (const auto& parameter : parameters_) stack.emplace_back(parameter);
    for (const auto& buffer : buffers_) stack.emplace_back(buffer);
    return stack;
  }

  std::vector<torch::Tensor> parameters_, buffers_;
  std::unique_ptr<torch::jit::GraphFunction> function_;
};

}  // namespace

std::unique_ptr<ForwardPath> make_eager_path(Model& model, const PrecisionPlan& plan) {
  return std::make_unique<EagerPath>(model, plan);
}

std::unique_ptr<ForwardPath> capture_torchscript(Model& model, const torch::Tensor& example,
                                                 const PrecisionPlan& plan) {
  return std::make_unique<TorchScriptPath>(model, example, plan);
}

void enable_fusers() {
  torch::jit::setTensorExprFuserEnabled(true);
  torch::jit::overrideCanFuseOnCPU(cpu_fusion_available());
}

bool cpu_fusion_available() {
  static const bool available = [] {
    torch::jit::overrideCanFuseOnCPU(true);
    torch::jit::setTensorExprFuserEnabled(true);
    bool fused = true;
    try {
      const auto unit = torch::jit::compile("def f(x):\n    return (x * x + x).relu() * 2.0\n");
      const auto input = torch::rand({64});
      for (int run = 0; run < 5; ++run) unit->get_function("f")({input});
    } catch (const std::exception& error) {  // c10::Error, or the interpreter's rethrow of it
      if (std::string(error.what()).find("LLVM Backend not found") == std::string::npos) throw;
      fused = false;
    }
    torch::jit::overrideCanFuseOnCPU(fused);
    return fused;
  }();
  return available;
}

}  // namespace ts::worker
