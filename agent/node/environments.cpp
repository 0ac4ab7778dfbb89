#include "agent/node/environments.hpp"

#include <nlohmann/json.hpp>

#include "shared/beside_this_program.hpp"
#include "shared/json_io.hpp"

namespace ts::agent {

Installation installation() {
  Installation installed;
  const auto listing = beside_this_program("../share/torchsweep/runners.json");
  if (listing.empty() || !std::filesystem::exists(listing)) return installed;
  const auto document = json_io::read(listing.string());
  for (const auto& [name, python] : document.at("environments").items()) {
    installed.environments[name] = python.get<std::string>();
  }
  for (const auto& [name, entry] : document.at("runners").items()) {
    const auto program = beside_this_program(entry.at("program").get<std::string>());
    if (program.empty() || !std::filesystem::exists(program)) continue;
    Runner runner{program, entry.at("python").get<bool>(), entry.at("env").get<std::string>()};
    const auto builds = entry.value("builds", nlohmann::json::object());  // kept: items() does not own it
    for (const auto& [environment, build] : builds.items()) {
      const auto built = beside_this_program(build.get<std::string>());
      if (!built.empty() && std::filesystem::exists(built)) runner.builds[environment] = built;
    }
    runner.flops_counted_by = entry.value("flops_counted_by", "");
    installed.runners[name] = std::move(runner);
  }
  return installed;
}

std::vector<Placement> placements(const std::map<std::string, Runner>& runners,
                                  const std::map<std::string, std::filesystem::path>& environments) {
  std::vector<Placement> found;
  for (const auto& [name, runner] : runners) {
    if (!runner.python) {
      found.push_back({name, runner.own_environment});
      for (const auto& [environment, program] : runner.builds) {
        if (environment != runner.own_environment && environments.contains(environment))
          found.push_back({name, environment});
      }
      continue;
    }
    for (const auto& [environment, python] : environments) found.push_back({name, environment});
  }
  return found;
}

std::vector<std::string> runner_command(const Placement& placement, const std::map<std::string, Runner>& runners,
                                        const std::map<std::string, std::filesystem::path>& environments) {
  const auto& runner = runners.at(placement.runner);
  if (!runner.python) {
    const auto build = runner.builds.find(placement.environment);
    return {(build == runner.builds.end() ? runner.program : build->second).string()};
  }
  return {environments.at(placement.environment).string(), runner.program.string()};
}

}  // namespace ts::agent
