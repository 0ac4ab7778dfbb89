#include "runners/libtorch/precision.hpp"

#include "runners/libtorch/compat.hpp"
#include "runners/libtorch/device.hpp"

namespace ts::worker {

PrecisionPlan plan_precision(Precision precision, const torch::Device& device) {
  PrecisionPlan plan{precision, device.type(), std::nullopt, false};
  switch (precision) {
    case Precision::fp32:
      break;
    case Precision::bf16:
      plan.autocast_dtype = at::kBFloat16;
      break;
    case Precision::fp16:
      if (!device.is_cuda()) {
        throw Unsupported("precision fp16 is unsupported on this device (" + device.str() +
                          "): fp16 autocast with loss scaling needs CUDA; use bf16 on CPU");
      }
      plan.autocast_dtype = at::kHalf;
      plan.loss_scaling = true;
      break;
  }
  return plan;
}

std::optional<std::string> autocast_dtype_name(const PrecisionPlan& plan) {
  if (!plan.autocast_dtype) return std::nullopt;
  return *plan.autocast_dtype == at::kBFloat16 ? "bfloat16" : "float16";
}

AutocastScope::AutocastScope(const PrecisionPlan& plan) : device_type_(plan.device_type) {
  if (!plan.autocast_dtype) return;
  active_ = true;
  previous_enabled_ = compat::autocast_enabled(device_type_);
  previous_dtype_ = compat::autocast_dtype(device_type_);
  compat::set_autocast_dtype(device_type_, *plan.autocast_dtype);
  compat::set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // As torch.autocast's __exit__: the cache of cast weights lives for one
  // outermost autocast region, so weights updated by the optimizer are recast.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(device_type_, previous_enabled_);
  compat::set_autocast_dtype(device_type_, previous_dtype_);
}

namespace {
constexpr double growth_factor = 2.0, backoff_factor = 0.5;
}  // namespace

LossScaler::LossScaler(const torch::Device& device, double initial_scale, int64_t growth_interval)
    : scale_(torch::full({1}, initial_scale, torch::TensorOptions().dtype(torch::kFloat).device(device))),
      growth_tracker_(torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt).device(device))),
      found_inf_(torch::zeros({1}, torch::TensorOptions().dtype(torch::kFloat).device(device))),
      initial_scale_(initial_scale),
      growth_interval_(growth_interval) {}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const { return loss * scale_.to(loss.dtype()); }

bool LossScaler::step(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> grads;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& parameter : group.params()) {
      if (parameter.grad().defined()) grads.push_back(parameter.grad());
    }
  }
  found_inf_.zero_();
  const auto inverse_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inverse_scale);
  const bool finite = found_inf_.item<float>() == 0.0f;
  if (finite) {
    optimizer.step();
  } else {
    ++skipped_steps_;
  }
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, growth_factor, backoff_factor, growth_interval_);
  return finite;
}

LossScalingReport LossScaler::report() const { return {initial_scale_, scale_.item<double>(), skipped_steps_}; }

}  // namespace ts::worker
