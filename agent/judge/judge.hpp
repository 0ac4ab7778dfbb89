#pragma once
// The one judge (docs/methodology.md, "Runners measure; the agent judges"):
// turns a runner's raw result into the judged one the coordinator stores,
// the same for every runner. Runners report raw measurements (epoch and
// step times, losses, memory readings, input stalls); everything derived
// from them is computed here, and the store only stores.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ts::agent {

struct JudgeInputs {
  nlohmann::json peak_flops;                         // this agent's capabilities.peak_flops (null: no utilisation)
  std::vector<int64_t> gpus;                         // the GPU indices the coordinator assigned
  nlohmann::json prices = nlohmann::json::object();  // the agent's price per device-hour by device name
  std::optional<double> run_seconds{};               // the runner's wall time as the agent measured it
};

// Adds to a successful result: the timing summary, its noise and warm-up
// judgements (agent/judge/timing_summary.hpp), the input-bound judgement
// (agent/judge/input_stalls.hpp), the efficiency section
// (agent/judge/efficiency.hpp), the cost section (agent/judge/cost.hpp),
// the energy per sample and token (agent/judge/energy.hpp) and the
// warnings they raise. Then to every
// result, failed ones too, the summary the store stores
// (agent/judge/summary.hpp), replacing any it had.
void judge(nlohmann::json& result, const JudgeInputs& inputs);

}  // namespace ts::agent
