#pragma once
// One experiment, run the way docs/methodology.md describes: build the model
// and data from the seed, capture (compiled mode), warm up, then time the
// epochs; report what actually ran.
#include <functional>

#include "agent/worker/forward_path.hpp"
#include "agent/worker/job.hpp"
#include "agent/worker/result.hpp"

namespace ts::worker {

// Runs `job` and always returns a result: status ok, or failed/unsupported
// with the reason. Only a job whose content is invalid throws
// ts::InvalidInput (e.g. heads that do not divide width). `capture` is how
// compiled mode captures the model (replaceable to exercise the fallback).
using CaptureFunction = std::function<std::unique_ptr<ForwardPath>(Model&, const torch::Tensor&, const PrecisionPlan&)>;
Result run_experiment(const Job& job, const CaptureFunction& capture = capture_torchscript);

}  // namespace ts::worker
