#include "runners/libtorch/accuracy_check.hpp"

#include <cmath>
#include <stdexcept>

namespace ts::worker {
namespace {

torch::Tensor wide(const torch::Tensor& tensor) { return tensor.detach().to(torch::kCPU, torch::kFloat64).flatten(); }

double rmse(const torch::Tensor& values, const torch::Tensor& reference) {
  return values.numel() == 0 ? 0.0 : std::sqrt((values - reference).square().mean().item<double>());
}

}  // namespace

nlohmann::json tensor_figures(const std::string& name, const torch::Tensor& compiled, const torch::Tensor& eager,
                              const std::optional<torch::Tensor>& reference) {
  const auto c = wide(compiled), e = wide(eager);
  if (c.numel() != e.numel()) {
    throw std::runtime_error("accuracy: " + name + ": compiled has " + std::to_string(c.numel()) + " values, eager " +
                             std::to_string(e.numel()));
  }
  const auto finite_c = torch::isfinite(c), finite_e = torch::isfinite(e);
  const auto both = finite_c.logical_and(finite_e);
  const auto cb = c.masked_select(both), eb = e.masked_select(both);
  const double scaled = cb.numel() ? ((cb - eb).abs() / (eb.abs() + 1.0)).max().item<double>() : 0.0;
  const double norms = cb.norm().item<double>() * eb.norm().item<double>();
  nlohmann::json figures{{"name", name},
                         {"numel", c.numel()},
                         {"nonfinite_mismatches", finite_c.ne(finite_e).sum().item<int64_t>()},
                         {"max_scaled_difference", scaled},
                         {"cosine", norms > 0 ? nlohmann::json(cb.dot(eb).item<double>() / norms) : nlohmann::json()},
                         {"compiled_rmse", nullptr},
                         {"eager_rmse", nullptr}};
  if (reference) {
    const auto r = wide(*reference);
    const auto kept = both.logical_and(torch::isfinite(r));
    const auto rk = r.masked_select(kept);
    figures["compiled_rmse"] = rmse(c.masked_select(kept), rk);
    figures["eager_rmse"] = rmse(e.masked_select(kept), rk);
  }
  return figures;
}

nlohmann::json accuracy_section(const StepTensors& compiled, const StepTensors& eager,
                                const std::optional<StepTensors>& reference,
                                const std::optional<std::string>& reference_note) {
  if (compiled.size() != eager.size() || (reference && reference->size() != eager.size())) {
    throw std::runtime_error("accuracy: the compiled, eager and float64 steps gave different tensors");
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (std::size_t i = 0; i < eager.size(); ++i) {
    if (compiled[i].first != eager[i].first) {
      throw std::runtime_error("accuracy: compiled gave " + compiled[i].first + " where eager gave " + eager[i].first);
    }
    tensors.push_back(tensor_figures(eager[i].first, compiled[i].second, eager[i].second,
                                     reference ? std::optional((*reference)[i].second) : std::nullopt));
  }
  return {{"reference", reference ? "float64" : "eager"},
          {"reference_note", reference_note ? nlohmann::json(*reference_note) : nlohmann::json()},
          {"tensors", tensors}};
}

}  // namespace ts::worker
