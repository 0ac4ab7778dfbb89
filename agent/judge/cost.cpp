#include "agent/judge/cost.hpp"

#include <string>

#include "agent/judge/summary.hpp"
#include "agent/judge/timing_summary.hpp"
#include "shared/job_fields.hpp"

namespace ts::agent {

std::optional<nlohmann::json> cost_of(const nlohmann::json& result, const nlohmann::json& prices,
                                      std::optional<double> run_seconds) {
  const auto device = device_name(result);
  if (!device.is_string()) return std::nullopt;
  const auto name = device.get<std::string>();
  const auto& job = result.at("job");
  nlohmann::json price, source;
  if (const auto given = job.find("price_per_hour"); given != job.end() && given->contains(name)) {
    price = given->at(name);
    source = "job";
  } else if (prices.is_object() && prices.contains(name)) {
    price = prices.at(name);
    source = "agent";
  } else {
    return std::nullopt;
  }
  // A GPU job pays for each of its GPUs; a CPU job for its node's processor, however many ranks share it.
  const bool cuda = job_fields::get<std::string>(job, "device").starts_with("cuda");
  const int64_t devices = cuda ? job_fields::get<int64_t>(job, "gpus") : 1;
  const double per_second = price.get<double>() * static_cast<double>(devices) / 3600.0;
  return nlohmann::json{{"device", name},
                        {"devices", devices},
                        {"price_per_hour", price},
                        {"price_from", source},
                        {"per_million_samples", per_unit_of_work(result, "samples_per_second", per_second * 1e6)},
                        {"per_million_tokens", per_unit_of_work(result, "tokens_per_second", per_second * 1e6)},
                        {"run_seconds", run_seconds ? nlohmann::json(*run_seconds) : nlohmann::json(nullptr)},
                        {"run", run_seconds ? nlohmann::json(per_second * *run_seconds) : nlohmann::json(nullptr)}};
}

}  // namespace ts::agent
