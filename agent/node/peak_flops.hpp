#pragma once
// The measured peak FLOP/s of this node's devices, reported in the agent's
// capabilities and used for each result's model FLOPs utilisation
// (docs/methodology.md). The LibTorch worker measures it (`torchsweep-worker
// --probe-peak`: the agent stays free of LibTorch); the figure is cached in
// a file and measured again only when the node's fingerprint (host, cores,
// GPUs, torch, the torchsweep build) changes.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::agent {

enum class PeakProbe {
  cached,  // measure once, then reuse the cache while the fingerprint holds (default)
  fresh,   // measure at every start
  off,     // no peak: results carry FLOPs and FLOP/s, no utilisation (tests)
};

// "cached" | "fresh" | "off"; throws ts::InvalidInput naming `field`.
PeakProbe parse_peak_probe(const std::string& text, const std::string& field);

// {"devices": [...as the worker reports...], "measured_at", "cached": bool},
// or null when off, without a worker, or when the probe fails (logged).
nlohmann::json peak_flops(PeakProbe mode, const std::string& worker, const std::filesystem::path& cache_file,
                          const nlohmann::json& capabilities);

}  // namespace ts::agent
