#include "agent/node/peak_flops.hpp"

#include "agent/node/capabilities.hpp"
#include "shared/shell_command.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/schema.hpp"
#include "shared/timestamp.hpp"
#include "shared/version.hpp"

namespace ts::agent {
namespace {

// What the peak depends on: a change of any of these measures it again.
nlohmann::json fingerprint(const nlohmann::json& capabilities) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : capabilities.at("gpus")) gpus.push_back({gpu.at("name"), gpu.value("uuid", "")});
  return {{"hostname", capabilities.at("hostname")},
          {"cpu_cores", capabilities.at("cpu_cores")},
          {"gpus", gpus},
          {"torch_version", capabilities.value("torch_version", nlohmann::json())},
          {"cuda_version", capabilities.value("cuda_version", nlohmann::json())},
          {"torchsweep_version", std::string(version::number())},
          {"torchsweep_commit", std::string(version::commit())}};
}

nlohmann::json measure(const std::string& worker, const nlohmann::json& gpus) {
  // The agent's GPUs only (an allocation's, not the node's), by UUID as a
  // job's are given; the probe numbers them 0.. in that order, and each
  // figure is filed under the index the agent reported. Bounded, so that a
  // wedged device cannot keep the agent from starting.
  std::vector<int64_t> indices;
  for (const auto& gpu : gpus) indices.push_back(gpu.at("index").get<int64_t>());
  const auto output = output_of("env CUDA_VISIBLE_DEVICES=" + shell_quoted(visible_devices(gpus, indices)) +
                                " CUDA_DEVICE_ORDER=PCI_BUS_ID timeout -k 5 300 " + shell_quoted(worker) +
                                " --probe-peak --out - --log-level warn");
  try {
    auto measured = nlohmann::json::parse(output);
    static const schema::Validator validator("peak_flops.schema.json");
    validator.validate(measured);
    for (auto& device : measured.at("devices")) {
      const auto name = device.at("device").get<std::string>();
      if (!name.starts_with("cuda:")) continue;
      const auto ordinal = std::stoul(name.substr(5));
      if (ordinal >= indices.size()) throw InvalidInput("devices", name + " is not one of the agent's GPUs");
      device["index"] = indices[ordinal];
    }
    return measured;
  } catch (const std::exception& error) {
    log::warn("peak probe of {} failed ({}); results will carry no utilisation", worker, error.what());
    return nullptr;
  }
}

}  // namespace

PeakProbe parse_peak_probe(const std::string& text, const std::string& field) {
  if (text == "cached") return PeakProbe::cached;
  if (text == "fresh") return PeakProbe::fresh;
  if (text == "off") return PeakProbe::off;
  throw InvalidInput(field, "expected cached, fresh or off, got '" + text + "'");
}

nlohmann::json peak_flops(PeakProbe mode, const std::string& worker, const std::filesystem::path& cache_file,
                          const nlohmann::json& capabilities) {
  if (mode == PeakProbe::off || worker.empty()) return nullptr;
  const auto expected = fingerprint(capabilities);
  if (mode == PeakProbe::cached && std::filesystem::exists(cache_file)) {
    try {
      const auto cache = json_io::read(cache_file.string());
      if (cache.at("fingerprint") == expected) {
        auto peak = cache.at("peak");
        peak["cached"] = true;
        return peak;
      }
      log::info("peak probe: {} was measured on another configuration; measuring again", cache_file.string());
    } catch (const std::exception& error) {
      log::warn("peak probe: ignoring unreadable cache {}: {}", cache_file.string(), error.what());
    }
  }
  log::info("peak probe: measuring this node's matmul FLOP/s with {}", worker);
  auto peak = measure(worker, capabilities.at("gpus"));
  if (peak.is_null()) return peak;
  peak["measured_at"] = utc_timestamp();
  json_io::write_atomically(cache_file.string(), {{"fingerprint", expected}, {"peak", peak}});
  peak["cached"] = false;
  return peak;
}

}  // namespace ts::agent
