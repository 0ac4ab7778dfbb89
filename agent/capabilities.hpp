#pragma once
// What an agent tells the coordinator about its node in hello.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::agent {

// hostname, cpu_cores (available to this process), memory_bytes, gpus (from
// nvidia-smi when it is installed and answers; empty otherwise), runners.
nlohmann::json detect_capabilities(const std::vector<std::string>& runner_names);

// Parses `nvidia-smi --query-gpu=index,name,memory.total,uuid
// --format=csv,noheader,nounits` output (memory in MiB).
nlohmann::json parse_nvidia_smi(const std::string& csv);

}  // namespace ts::agent
