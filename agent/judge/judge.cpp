#include "agent/judge/judge.hpp"

#include "agent/judge/accuracy_gate.hpp"
#include "agent/judge/cost.hpp"
#include "agent/judge/efficiency.hpp"
#include "agent/judge/energy.hpp"
#include "agent/judge/generation_summary.hpp"
#include "agent/judge/input_stalls.hpp"
#include "agent/judge/summary.hpp"
#include "agent/judge/timing_summary.hpp"
#include "shared/job_fields.hpp"

namespace ts::agent {

namespace {

// What a successful run's measurements say.
void judge_measurements(nlohmann::json& result, const JudgeInputs& inputs) {
  if (!result.contains("warnings")) result["warnings"] = nlohmann::json::array();
  summarize_timing(result);
  summarize_generation(result);
  judge_input_stalls(result);
  judge_accuracy(result);
  if (job_fields::get<int64_t>(result.at("job"), "warmup") == 0) {
    result["warnings"].push_back(
        "warmup is 0: only the first iteration (compilation) ran before the timed epochs; allocator growth and "
        "tuning may still fall in them");
  }
  if (auto cost = cost_of(result, inputs.prices, inputs.run_seconds)) result["cost"] = std::move(*cost);
  judge_energy(result);
  // Decoding is bound by memory bandwidth, not by FLOPs: a generation has no MFU.
  if (job_fields::get<std::string>(result.at("job"), "task") == "generate") return;
  if (auto efficiency = efficiency_of(result, inputs.peak_flops, inputs.gpus)) {
    result["efficiency"] = std::move(*efficiency);
  }
}

}  // namespace

void judge(nlohmann::json& result, const JudgeInputs& inputs) {
  if (result.value("status", std::string()) == "ok") judge_measurements(result, inputs);
  result["summary"] = summary_of(result);
}

}  // namespace ts::agent
