#pragma once
// Counts the fused kernels that actually run. NNC wraps each fused group's
// kernel in a RecordFunction named after it ("fused_mul_add_..."), in the
// forward graph and in the backward graphs the autograd engine runs, so a
// global RecordFunction observer sees every fused group wherever it lives.
// Observing costs time: keep an observer alive only around an untimed step.
#include <ATen/record_function.h>

#include "runners/libtorch/result.hpp"

namespace ts::worker {

class FusionObserver {
 public:
  FusionObserver();
  ~FusionObserver();
  FusionObserver(const FusionObserver&) = delete;
  FusionObserver& operator=(const FusionObserver&) = delete;

  // What ran since construction, as for one step.
  FusionReport report() const;

 private:
  at::CallbackHandle handle_;
};

}  // namespace ts::worker
