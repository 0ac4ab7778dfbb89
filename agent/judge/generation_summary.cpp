#include "agent/judge/generation_summary.hpp"

#include <numeric>
#include <vector>

#include "shared/job_fields.hpp"
#include "shared/statistics.hpp"

namespace ts::agent {

void summarize_generation(nlohmann::json& result) {
  if (result.value("status", std::string()) != "ok" || !result.contains("generation")) return;
  auto& generation = result.at("generation");
  const auto& timing = result.at("timing");
  generation["prefill_seconds_median"] = stats::median(generation.at("prefill_seconds").get<std::vector<double>>());
  std::vector<double> steps, decode_seconds;  // every decode step; each generation's decode, summed
  for (const auto& epoch : timing.at("step_seconds")) {
    const auto seconds = epoch.get<std::vector<double>>();
    steps.insert(steps.end(), seconds.begin(), seconds.end());
    decode_seconds.push_back(std::accumulate(seconds.begin(), seconds.end(), 0.0));
  }
  if (steps.empty()) return;
  const auto s = stats::summarize(steps);
  generation["decode_latency"] = {{"p50", s.median}, {"p90", s.p90}, {"p99", s.p99}};
  const double median_decode = stats::median(decode_seconds);
  const auto tokens = job_fields::get<int64_t>(result.at("job"), "batch_size") * static_cast<int64_t>(steps.size()) /
                      static_cast<int64_t>(decode_seconds.size());
  const double per_second = median_decode > 0 ? static_cast<double>(tokens) / median_decode : 0.0;
  generation["decode_tokens_per_second"] = per_second;
  result.at("timing")["tokens_per_second"] = per_second;
}

}  // namespace ts::agent
