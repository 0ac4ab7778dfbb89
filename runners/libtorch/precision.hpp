#pragma once
// Precision: what autocast does, and dynamic loss scaling for fp16.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "runners/libtorch/job.hpp"
#include "runners/libtorch/result.hpp"

namespace ts::worker {

struct PrecisionPlan {
  Precision precision = Precision::fp32;
  c10::DeviceType device_type = c10::DeviceType::CPU;
  std::optional<at::ScalarType> autocast_dtype;  // none for fp32
  bool loss_scaling = false;                     // fp16 only
};

// Throws Unsupported for fp16 on CPU (no fp16 autocast or loss scaling there).
PrecisionPlan plan_precision(Precision precision, const torch::Device& device);
std::optional<std::string> autocast_dtype_name(const PrecisionPlan& plan);

// Turns autocast on for the plan's device and dtype while alive, restoring
// the previous state (and dropping autocast's weight-cast cache) afterwards.
class AutocastScope {
 public:
  explicit AutocastScope(const PrecisionPlan& plan);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool active_ = false;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// Dynamic loss scaling as torch.amp.GradScaler does it: scale the loss,
// unscale the gradients and skip the step when any is inf/NaN (halving the
// scale), double the scale after growth_interval clean steps. The job gives
// the initial scale and the interval; the factors are those Keras's
// LossScaleOptimizer fixes, so that every runner scales alike.
class LossScaler {
 public:
  LossScaler(const torch::Device& device, double initial_scale, int64_t growth_interval);
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Unscales the gradients of `optimizer`'s parameters, steps unless one is
  // not finite, and updates the scale. Returns whether the step was taken.
  bool step(torch::optim::Optimizer& optimizer);
  LossScalingReport report() const;

 private:
  torch::Tensor scale_, growth_tracker_, found_inf_;
  double initial_scale_;
  int64_t growth_interval_;
  int64_t skipped_steps_ = 0;
};

}  // namespace ts::worker
