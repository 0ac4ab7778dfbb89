#pragma once
// The accuracy gate's verdict (docs/compiler.md), one rule for every
// runner: a compiled (or graph) step is held to the same step run eager
// from the same weights and batch. The runner measures each output, loss
// and gradient (accuracy.tensors, torchsweep_harness/accuracy.py and the
// worker's accuracy_check); this judges them, in the spirit of PyTorch's
// benchmark harness (torch._dynamo.utils.same):
//   - a tensor with positions where only one of compiled and eager is
//     finite fails;
//   - one within allclose(atol = rtol = tol) of eager passes;
//   - with a float64 reference, one passes when its RMSE from the reference
//     is at most multiplier * eager's RMSE + tol / 10;
//   - without one, a large tensor (100,000 values or more) passes when its
//     cosine similarity with eager is at least 0.99.
// tol is 1e-4 for fp32 and 1e-2 for bf16 and fp16 autocast; the multiplier
// 2 and 3. A tensor's deviation is the figure of the criterion that decided
// (the smallest, each over what it allows): above 1 always fails.
#include <nlohmann/json.hpp>

namespace ts::agent {

// Fills accuracy.{status, deviation, tolerance, worst, failed} of a
// successful compiled result (eager results are left alone); a generation
// is judged by generation.matches_eager. A failure is a warning; with the
// job's `accuracy: required` it fails the result, its timing kept.
void judge_accuracy(nlohmann::json& result);

}  // namespace ts::agent
