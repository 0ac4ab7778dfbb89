#include "agent/judge/energy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace ts::agent {

void judge_energy(nlohmann::json& result) {
  const auto found = result.find("energy");
  if (found == result.end() || found->value("status", "") != "ok") return;
  auto& energy = *found;
  const auto& power = energy.at("average_power_w");
  const auto per = [&](const char* rate) -> nlohmann::json {
    const auto value = result.value(nlohmann::json::json_pointer(std::string("/timing/") + rate), nlohmann::json());
    if (!power.is_number() || !value.is_number() || value.get<double>() <= 0) return nullptr;
    return power.get<double>() / value.get<double>();
  };
  energy["per_sample_joules"] = per("samples_per_second");
  energy["per_token_joules"] = per("tokens_per_second");
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
