#include "agent/judge/efficiency.hpp"

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/models/flops.hpp"
#include "shared/peak_figure.hpp"

namespace ts::agent {

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
  // The peak of the products the job ran: an fp32 job on a GPU that allowed
  // TensorFloat-32 for its matrix products or its convolutions
  // (execution.math, docs/gpu.md) against the TF32 peak.
  const bool cuda = job_fields::get<std::string>(job, "device").starts_with("cuda");
  const auto allowed = [&](const char* field) {
    return result.value(nlohmann::json::json_pointer(std::string("/execution/math/") + field), nlohmann::json()) ==
           true;
  };
  const bool tf32 = allowed("tf32_matmul") || allowed("tf32_conv");
  const std::string dtype =
      job_fields::get<std::string>(job, "precision") != "fp32" ? "bf16" : (cuda && tf32 ? "tf32" : "fp32");
  const auto peak =
      peak_figure(peak_flops, cuda, gpus, dtype,
                  result.value(nlohmann::json::json_pointer("/context/intra_op_threads"), nlohmann::json()));
  const bool measured = peak && peak->flops_per_s > 0;
  return nlohmann::json{
      {"convention", convention},
      {"forward_flops_per_sample", flops.forward_per_sample},
      {"flops_per_step", flops.per_step},
      {"achieved_flops_per_s", achieved},
      {"peak_flops_per_s", peak ? nlohmann::json(peak->flops_per_s) : nlohmann::json(nullptr)},
      {"peak_dtype", dtype},
      {"peak_kernel", peak ? peak->kernel : nlohmann::json(nullptr)},
      {"mfu", measured ? nlohmann::json(achieved / peak->flops_per_s) : nlohmann::json(nullptr)},
      // A rate above the peak: the peak is wrong, and the agent measures it again.
      {"peak_below_achieved", measured ? nlohmann::json(achieved > peak->flops_per_s) : nlohmann::json(nullptr)}};
}

}  // namespace ts::agent
