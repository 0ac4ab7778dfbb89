#pragma once
// The accuracy gate's measurements in the worker (docs/compiler.md): the
// tensors of one step run compiled, eager and eager in float64 from the
// same weights and batch, and the figures of schemas/result.schema.json's
// accuracy.tensors that the agent's rule (agent/judge/accuracy_gate.hpp)
// judges. The Python runners measure the same figures in
// torchsweep_harness/accuracy.py.
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ts::worker {

// One step's compared tensors, by name: output, loss, grad:PARAMETER.
using StepTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// The figures of one compared tensor: the largest |compiled - eager| /
// (1 + |eager|) over the positions finite in both, their cosine similarity,
// the positions finite in only one, and each one's RMSE from the float64
// reference (null without one).
nlohmann::json tensor_figures(const std::string& name, const torch::Tensor& compiled, const torch::Tensor& eager,
                              const std::optional<torch::Tensor>& reference);

// The result's accuracy section from the three runs (the same names in the
// same order; `reference` empty with `reference_note` saying why).
nlohmann::json accuracy_section(const StepTensors& compiled, const StepTensors& eager,
                                const std::optional<StepTensors>& reference,
                                const std::optional<std::string>& reference_note);

}  // namespace ts::worker
