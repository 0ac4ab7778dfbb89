#pragma once
// The generation section's derived figures (task generate,
// docs/language-models.md), judged by the agent from the raw prefill and
// decode-step times the runner reports: the median prefill, the decode
// tokens per second and the per-token decode latency percentiles.
#include <nlohmann/json.hpp>

namespace ts::agent {

// Fills generation.prefill_seconds_median, decode_tokens_per_second (also
// timing.tokens_per_second) and decode_latency {p50, p90, p99}. Only a
// successful result with a generation section is touched.
void summarize_generation(nlohmann::json& result);

}  // namespace ts::agent
