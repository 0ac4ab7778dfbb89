#include "agent/judge/energy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>

#include "agent/judge/timing_summary.hpp"

namespace ts::agent {

void judge_energy(nlohmann::json& result) {
  const auto found = result.find("energy");
  if (found == result.end() || found->value("status", "") != "ok") return;
  auto& energy = *found;
  const auto& power = energy.at("average_power_w");
  for (const auto& [field, rate] :
       {std::pair{"per_sample_joules", "samples_per_second"}, std::pair{"per_token_joules", "tokens_per_second"}}) {
    energy[field] = power.is_number() ? per_unit_of_work(result, rate, power.get<double>()) : nullptr;
  }
  const auto& integral = energy.at("power_integral_joules");
  const double joules = energy.at("joules").get<double>();
  if (integral.is_number() && joules > 0 &&
      std::abs(integral.get<double>() - joules) > energy_disagreement_limit * joules) {
    result["warnings"].push_back(fmt::format(
        "energy: the {} counter says {:.4g} J over the timed epochs, the integral of the sampled power {:.4g} J; "
        "more than {:.0f}% apart, the energy figures may be wrong",
        energy.at("source").get<std::string>(), joules, integral.get<double>(), energy_disagreement_limit * 100));
  }
}

}  // namespace ts::agent
