#include "shared/peak_figure.hpp"

namespace ts {

std::optional<PeakFigure> peak_figure(const nlohmann::json& peak_flops, bool cuda, const std::vector<int64_t>& gpus,
                                      const std::string& dtype, const nlohmann::json& threads) {
  if (!peak_flops.is_object()) return std::nullopt;
  const auto figure = [&](const auto& match) -> std::optional<PeakFigure> {
    for (const auto& entry : peak_flops.at("devices")) {
      if (match(entry) && entry.contains(dtype) && entry.at(dtype).is_number()) {
        return PeakFigure{entry.at(dtype).template get<double>(),
                          entry.value(nlohmann::json::json_pointer("/kernels/" + dtype), nlohmann::json())};
      }
    }
    return std::nullopt;
  };
  if (!cuda) {
    const auto own = figure([&](const nlohmann::json& e) {
      return e.at("device") == "cpu" && e.contains("threads") && e.at("threads") == threads;
    });
    return own ? own : figure([](const nlohmann::json& e) { return e.at("device") == "cpu"; });
  }
  PeakFigure total;
  for (const auto index : gpus) {
    const auto one = figure([&](const nlohmann::json& e) { return e.value("index", int64_t{-1}) == index; });
    if (!one) return std::nullopt;
    total.flops_per_s += one->flops_per_s;
    if (total.kernel.is_null()) total.kernel = one->kernel;
  }
  return gpus.empty() ? std::nullopt : std::optional<PeakFigure>(total);
}

}  // namespace ts
