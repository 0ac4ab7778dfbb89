#pragma once
// The judge's part of a result's "energy" section (the agent measured the
// joules over the timed epochs; agent/node/energy_meter.hpp): joules per
// sample and per token at the measured throughput, and a warning where the
// counter and the integral of the sampled power disagree
// (docs/methodology.md, "What a result's energy is").
#include <nlohmann/json.hpp>

namespace ts::agent {

// How far the counter's joules and the sampled power's integral may differ
// before the result says so: NVML's power reading is itself an average over
// up to a second, so short windows differ by a few percent.
inline constexpr double energy_disagreement_limit = 0.2;

void judge_energy(nlohmann::json& result);

}  // namespace ts::agent
