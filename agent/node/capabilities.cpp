#include "agent/node/capabilities.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "agent/node/probe_cache.hpp"
#include "shared/shell_command.hpp"
#include "shared/beside_this_program.hpp"
#include "shared/errors.hpp"
#include "shared/host_name.hpp"

namespace ts::agent {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

}  // namespace

nlohmann::json parse_nvidia_smi(const std::string& csv) {
  nlohmann::json gpus = nlohmann::json::array();
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(trim(cell));
    if (fields.size() < 3) continue;
    try {
      nlohmann::json gpu{
          {"index", std::stoi(fields[0])}, {"name", fields[1]}, {"memory_bytes", std::stoll(fields[2]) * 1024 * 1024}};
      if (fields.size() > 3) gpu["uuid"] = fields[3];
      gpus.push_back(std::move(gpu));
    } catch (const std::exception&) {
      // A line nvidia-smi printed that is not a GPU row (a warning): skip it.
    }
  }
  return gpus;
}

nlohmann::json allocated_gpus(const nlohmann::json& gpus, const char* visible) {
  if (visible == nullptr) return gpus;
  std::set<std::string> named;
  std::istringstream list(visible);
  for (std::string entry; std::getline(list, entry, ',');) named.insert(trim(entry));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& gpu : gpus) {
    if (named.contains(std::to_string(gpu.at("index").get<int64_t>())) || named.contains(gpu.value("uuid", ""))) {
      kept.push_back(gpu);
    }
  }
  return kept;
}

std::string visible_devices(const nlohmann::json& gpus, const std::vector<int64_t>& indices) {
  std::string visible;
  for (const auto index : indices) {
    const auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const auto& g) { return g.at("index") == index; });
    if (gpu == gpus.end()) {
      throw InvalidInput("gpus", "GPU " + std::to_string(index) + " is not one this agent reported");
    }
    const auto uuid = gpu->value("uuid", "");
    visible += (visible.empty() ? "" : ",") + (uuid.empty() ? std::to_string(index) : uuid);
  }
  return visible;
}

nlohmann::json parse_runner_versions(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  std::getline(lines, line);  // "torchsweep-NAME VERSION (COMMIT)"
  nlohmann::json versions = nlohmann::json::object();
  if (!std::getline(lines, line)) return versions;
  std::istringstream words(line);
  for (std::string name, version; words >> name >> version;) {
    versions[name] = version == "none" ? nlohmann::json(nullptr) : nlohmann::json(version);
  }
  return versions;
}

std::map<std::string, std::vector<std::string>> parse_runner_axes(const std::string& output) {
  std::istringstream lines(output);
  std::map<std::string, std::vector<std::string>> axes;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key != "modes" && key != "precisions" && key != "tasks") continue;  // the first two lines: program, versions
    for (std::string value; words >> value;) axes[key].push_back(value);
  }
  return axes;
}

std::vector<std::string> parse_model_list(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  std::getline(lines, line);  // the header
  std::vector<std::string> models;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    if (std::string name; words >> name) models.push_back(name);
  }
  return models;
}

std::map<Placement, RunnerProbe> probe_runners(const std::map<std::string, Runner>& runners,
                                               const std::map<std::string, std::filesystem::path>& environments,
                                               const std::filesystem::path& cache_file) {
  ProbeCache cache(cache_file);
  std::vector<std::string> commands;
  std::map<std::string, std::size_t> asked;                            // command -> its place in `commands`
  std::map<std::string, std::vector<std::filesystem::path>> files_of;  // command -> its words
  std::map<std::string, ProbeAnswers> kept;
  std::map<Placement, std::string> command_of;
  for (const auto& placement : placements(runners, environments)) {
    std::string command;
    const auto words = runner_command(placement, runners, environments);
    for (const auto& word : words) command += shell_quoted(word) + " ";
    command_of[placement] = command;
    if (asked.contains(command) || kept.contains(command)) continue;
    if (auto answers = cache.find(command)) {
      kept[command] = std::move(*answers);
      continue;
    }
    asked[command] = commands.size();
    files_of[command] = {words.begin(), words.end()};
    // Bounded: a runner that hangs (or lists thousands of models on a busy
    // node) must not keep the agent from starting.
    commands.push_back("timeout -k 2 60 " + command + "--version 2>/dev/null");
    commands.push_back("timeout -k 2 60 " + command + "--list-models 2>/dev/null");
  }
  const auto outputs = outputs_of(commands);
  for (const auto& [command, index] : asked) {
    const auto& version = outputs[index];
    const auto& list = outputs[index + 1];
    if (version.status != 0 || list.status != 0) continue;
    kept[command] = {version.out, list.out};
    cache.remember(command, files_of.at(command), kept.at(command));
  }
  cache.save();
  std::map<Placement, RunnerProbe> probes;
  for (const auto& [placement, command] : command_of) {
    // Kept or both answered now; else what this start's --version said, if anything.
    const auto answers = kept.find(command);
    const auto version = answers != kept.end() ? CommandOutput{answers->second.version, 0} : outputs[asked.at(command)];
    const auto list = answers != kept.end() ? CommandOutput{answers->second.models, 0} : outputs[asked.at(command) + 1];
    probes[placement] = {
        version.status == 0, parse_runner_versions(version.out),
        list.status == 0 ? parse_model_list(list.out) : std::vector<std::string>{},
        version.status == 0 ? parse_runner_axes(version.out) : std::map<std::string, std::vector<std::string>>{}};
  }
  return probes;
}

std::map<std::string, RunnerProbe> own_probes(const std::map<Placement, RunnerProbe>& probes,
                                              const std::map<std::string, Runner>& runners) {
  std::map<std::string, RunnerProbe> own;
  for (const auto& [name, runner] : runners) {
    if (const auto probe = probes.find({name, runner.own_environment}); probe != probes.end()) {
      own[name] = probe->second;
    }
  }
  return own;
}

nlohmann::json environment_capabilities(const std::map<Placement, RunnerProbe>& probes,
                                        const std::map<std::string, Runner>& runners,
                                        const std::map<std::string, std::filesystem::path>& environments) {
  auto offered = nlohmann::json::object();
  for (const auto& [placement, probe] : probes) {
    if (!probe.answered || placement.environment.empty() || !runners.contains(placement.runner)) continue;
    auto& entry = offered[placement.environment];
    if (!entry.contains("python")) {
      const auto python = environments.find(placement.environment);
      entry["python"] =
          python == environments.end() ? nlohmann::json(nullptr) : nlohmann::json(python->second.string());
      entry["runners"] = nlohmann::json::object();
    }
    entry["runners"][placement.runner] = probe.versions;
    if (!probe.models.empty()) entry["models"][placement.runner] = probe.models;
  }
  return offered;
}

nlohmann::json runner_capabilities(const std::map<std::string, RunnerProbe>& runners) {
  nlohmann::json names = nlohmann::json::array(), frameworks = nlohmann::json::object();
  nlohmann::json models = nlohmann::json::object();
  nlohmann::json axes{{"modes", nlohmann::json::object()},
                      {"precisions", nlohmann::json::object()},
                      {"tasks", nlohmann::json::object()}};
  for (const auto& [name, probe] : runners) {
    names.push_back(name);
    frameworks[name] = probe.versions;
    if (!probe.models.empty()) models[name] = probe.models;
    for (const auto& [key, values] : probe.axes) axes[key][name] = values;
  }
  return {{"runners", names},       {"frameworks", frameworks},         {"models", models},
          {"modes", axes["modes"]}, {"precisions", axes["precisions"]}, {"tasks", axes["tasks"]}};
}

nlohmann::json detect_capabilities(const std::map<std::string, RunnerProbe>& runners) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const auto worker = runners.find("libtorch");
  const auto version_of = [&](const char* key) {
    return worker == runners.end() ? nlohmann::json(nullptr) : worker->second.versions.value(key, nlohmann::json());
  };
  auto capabilities = runner_capabilities(runners);
  capabilities.update(
      {{"hostname", host_name()},
       {"cpu_cores", std::max(1, cores)},
       {"memory_bytes", static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE)},
       {"gpus", allocated_gpus(parse_nvidia_smi(output_of("nvidia-smi --query-gpu=index,name,memory.total,uuid "
                                                          "--format=csv,noheader,nounits 2>/dev/null")),
                               std::getenv("CUDA_VISIBLE_DEVICES"))},
       {"torch_version", version_of("torch")},
       {"cuda_version", version_of("cuda")}});
  return capabilities;
}

}  // namespace ts::agent
