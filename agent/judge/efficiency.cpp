#include "agent/judge/efficiency.hpp"

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/models/flops.hpp"

namespace ts::agent {
namespace {

// The peak of the devices a job ran on in `dtype`: the CPU's for a CPU job
// (its ranks share it), the sum over its GPUs for a CUDA job.
std::optional<double> peak_of(const nlohmann::json& peak_flops, bool cuda, const std::vector<int64_t>& gpus,
                              const std::string& dtype) {
  if (!peak_flops.is_object()) return std::nullopt;
  const auto figure = [&](const auto& match) -> std::optional<double> {
    for (const auto& entry : peak_flops.at("devices")) {
      if (match(entry) && entry.contains(dtype) && entry.at(dtype).is_number()) {
        return entry.at(dtype).template get<double>();
      }
    }
    return std::nullopt;
  };
  if (!cuda) return figure([](const nlohmann::json& e) { return e.at("device") == "cpu"; });
  double total = 0;
  for (const auto index : gpus) {
    const auto one = figure([&](const nlohmann::json& e) { return e.value("index", int64_t{-1}) == index; });
    if (!one) return std::nullopt;
    total += *one;
  }
  return gpus.empty() ? std::nullopt : std::optional<double>(total);
}

}  // namespace

std::optional<nlohmann::json> efficiency_of(const nlohmann::json& result, const nlohmann::json& peak_flops,
                                            const std::vector<int64_t>& gpus) {
  const auto step = result.value(nlohmann::json::json_pointer("/timing/median_step_seconds"), 0.0);
  if (step <= 0) return std::nullopt;
  const auto& job = result.at("job");
  models::StepFlops flops;
  std::string convention = "matmul_conv_2flops_per_mac_train_3x_forward";
  try {
    flops = models::step_flops(job);
  } catch (const InvalidInput&) {
    // A model schemas/models.json has no formula for: the runner's count, if it made one.
    const auto counted = result.value(nlohmann::json::json_pointer("/execution/counted_flops"), nlohmann::json());
    if (!counted.is_object()) return std::nullopt;
    flops.forward_per_sample = counted.at("forward_per_sample").get<double>();
    flops.per_step = counted.at("per_step").get<double>() * job_fields::get<int64_t>(job, "gpus");
    convention = "flop_counter_2flops_per_mac_counted_step";
  }
  const double achieved = flops.per_step / step;
  // The peak of the matrix products the job ran: an fp32 job on a GPU that
  // allowed TensorFloat-32 (execution.math, docs/gpu.md) against the TF32 peak.
  const bool cuda = job_fields::get<std::string>(job, "device").starts_with("cuda");
  const bool tf32 = result.value(nlohmann::json::json_pointer("/execution/math/tf32_matmul"), nlohmann::json()) == true;
  const std::string dtype =
      job_fields::get<std::string>(job, "precision") != "fp32" ? "bf16" : (cuda && tf32 ? "tf32" : "fp32");
  const auto peak = peak_of(peak_flops, cuda, gpus, dtype);
  return nlohmann::json{{"convention", convention},
                        {"forward_flops_per_sample", flops.forward_per_sample},
                        {"flops_per_step", flops.per_step},
                        {"achieved_flops_per_s", achieved},
                        {"peak_flops_per_s", peak ? nlohmann::json(*peak) : nlohmann::json(nullptr)},
                        {"peak_dtype", dtype},
                        {"mfu", peak && *peak > 0 ? nlohmann::json(achieved / *peak) : nlohmann::json(nullptr)}};
}

}  // namespace ts::agent
