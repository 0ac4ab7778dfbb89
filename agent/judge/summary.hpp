#pragma once
// The judged result's `summary` (docs/store.md): one flat object whose keys
// are exactly the results columns of schemas/result_columns.json that the
// store takes from a result (all but who delivered it and when), each with
// its value or null. Every figure the store keeps that is derived from the
// document (compile time, the memory figure, the device, the framework
// version, the GPU process memory) is derived here, once; the store maps
// the summary to its columns by name and derives nothing.
#include <nlohmann/json.hpp>

namespace ts::agent {

// The summary of any result document, judged or failed.
nlohmann::json summary_of(const nlohmann::json& result);

// What the device_name column holds: the GPU model for CUDA results, the
// CPU model otherwise (null without a context).
nlohmann::json device_name(const nlohmann::json& result);

}  // namespace ts::agent
