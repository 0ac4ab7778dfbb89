#include "agent/judge/input_stalls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "shared/job_fields.hpp"
#include "shared/statistics.hpp"

namespace ts::agent {

void judge_input_stalls(nlohmann::json& result) {
  if (result.value("status", std::string()) != "ok" || !result.contains("data")) return;
  auto& data = result.at("data");
  const auto stalls = data.at("epoch_input_stall_seconds").get<std::vector<double>>();
  const auto epochs = result.at("timing").at("epoch_seconds").get<std::vector<double>>();
  std::vector<double> fractions;
  for (std::size_t i = 0; i < stalls.size() && i < epochs.size(); ++i) {
    fractions.push_back(epochs[i] > 0 ? std::min(1.0, stalls[i] / epochs[i]) : 0.0);
  }
  const auto above = job_fields::get<double>(result.at("job"), "input_bound_above");
  const double median = fractions.empty() ? 0.0 : stats::median(fractions);
  data["median_input_stall_fraction"] = median;
  data["input_bound"] = median > above;
  data["input_bound_epochs"] = std::count_if(fractions.begin(), fractions.end(), [&](double f) { return f > above; });
  if (median > above) {
    result["warnings"].push_back(fmt::format(
        "input-bound: the step loop waited for data {:.1f}% of the median epoch (above input_bound_above, {})",
        100 * median, above));
  }
}

}  // namespace ts::agent
