#pragma once
// What an agent tells the coordinator about its node in hello.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::agent {

// hostname, cpu_cores (available to this process), memory_bytes, gpus (from
// nvidia-smi when it is installed and answers; empty otherwise), runners,
// and torch_version/cuda_version from `WORKER --version` when the LibTorch
// worker's path is given (null otherwise).
nlohmann::json detect_capabilities(const std::vector<std::string>& runner_names, const std::string& worker = "");

// Parses the "torch 2.6.0 cuda 12.4" line of `torchsweep-worker --version`.
std::pair<nlohmann::json, nlohmann::json> parse_worker_versions(const std::string& output);

// Parses `nvidia-smi --query-gpu=index,name,memory.total,uuid
// --format=csv,noheader,nounits` output (memory in MiB).
nlohmann::json parse_nvidia_smi(const std::string& csv);

// CUDA_VISIBLE_DEVICES for the GPUs of `indices` (the coordinator's
// assignment, in the indices this agent reported): their UUIDs, so that a
// job gets exactly the GPUs it was given whatever CUDA's own device order;
// an index whose GPU reported no UUID is passed as the index, which
// CUDA_DEVICE_ORDER=PCI_BUS_ID (set beside it) makes mean nvidia-smi's.
// Throws ts::InvalidInput for an index this agent never reported.
std::string visible_devices(const nlohmann::json& gpus, const std::vector<int64_t>& indices);

}  // namespace ts::agent
