#pragma once
// What an agent tells the coordinator about its node in hello.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/node/environments.hpp"

namespace ts::agent {

// What a runner's `--version` and `--list-models` said: whether it answered
// (exit 0: its framework imports here), the versions of its second line and
// the models it runs (empty when --list-models did not answer).
struct RunnerProbe {
  bool answered = false;
  nlohmann::json versions = nlohmann::json::object();  // e.g. {"torch": "2.6.0", "cuda": null}
  std::vector<std::string> models;
  // What else its --version said it runs: "modes" and "precisions".
  std::map<std::string, std::vector<std::string>> axes;
};

// What each placement's runner said to `--version` and `--list-models`, all
// started at once (Python runners take seconds to import their framework
// and list their libraries' models), each given 60 s. A runner is asked
// once per interpreter, however many environment names share it, and not
// at all where `cache_file` (agent/node/probe_cache.hpp; empty: none) keeps
// its answers and nothing they depend on has changed.
std::map<Placement, RunnerProbe> probe_runners(const std::map<std::string, Runner>& runners,
                                               const std::map<std::string, std::filesystem::path>& environments,
                                               const std::filesystem::path& cache_file = {});

// Each runner's probe in its own environment (or where it runs as it is),
// for those probed there.
std::map<std::string, RunnerProbe> own_probes(const std::map<Placement, RunnerProbe>& probes,
                                              const std::map<std::string, Runner>& runners);

// The environments in which some runner answered, as capabilities
// (schemas/protocol/hello.schema.json): {NAME: {python, runners: {RUNNER:
// versions}, models: {RUNNER: [model, ...]}}}.
nlohmann::json environment_capabilities(const std::map<Placement, RunnerProbe>& probes,
                                        const std::map<std::string, Runner>& runners,
                                        const std::map<std::string, std::filesystem::path>& environments);

// What the runners said, as capabilities: runners, frameworks (each
// runner's versions), models (where it listed them), modes and precisions
// (where its --version named them).
nlohmann::json runner_capabilities(const std::map<std::string, RunnerProbe>& runners);

// runner_capabilities, and hostname, cpu_cores (available to this process),
// memory_bytes, gpus (from nvidia-smi when it is installed and answers,
// as allocated_gpus keeps them; empty otherwise), and torch_version/cuda_version of the LibTorch worker's
// (null without one).
nlohmann::json detect_capabilities(const std::map<std::string, RunnerProbe>& runners);

// The model names of a runner's `--list-models`: the first word of each
// line after the header.
std::vector<std::string> parse_model_list(const std::string& output);

// The second line of a runner's `--version` ("torch 2.6.0 cuda none",
// "jax 0.10.2 jaxlib 0.10.2 keras 3.15.1") as {name: version or null}.
nlohmann::json parse_runner_versions(const std::string& output);

// The lines of a runner's `--version` after those two that say what it runs
// ("modes eager graph compiled", "precisions fp32 bf16"), by their first word.
std::map<std::string, std::vector<std::string>> parse_runner_axes(const std::string& output);

// Parses `nvidia-smi --query-gpu=index,name,memory.total,uuid
// --format=csv,noheader,nounits` output (memory in MiB).
nlohmann::json parse_nvidia_smi(const std::string& csv);

// The GPUs this agent may hand out: all of `gpus`, or, when the agent was
// started with CUDA_VISIBLE_DEVICES set (Slurm sets it for the GPUs of an
// allocation, `--gres=gpu:N`), only those it names, by index or UUID
// (docs/deploy.md). `visible` is that variable's value, or null.
nlohmann::json allocated_gpus(const nlohmann::json& gpus, const char* visible);

// CUDA_VISIBLE_DEVICES for the GPUs of `indices` (the coordinator's
// assignment, in the indices this agent reported): their UUIDs, so that a
// job gets exactly the GPUs it was given whatever CUDA's own device order;
// an index whose GPU reported no UUID is passed as the index, which
// CUDA_DEVICE_ORDER=PCI_BUS_ID (set beside it) makes mean nvidia-smi's.
// Throws ts::InvalidInput for an index this agent never reported.
std::string visible_devices(const nlohmann::json& gpus, const std::vector<int64_t>& indices);

}  // namespace ts::agent
