#include "agent/node/node.hpp"

#include "agent/node/capabilities.hpp"
#include "agent/node/probe_cache.hpp"

namespace ts::agent {

nlohmann::json installed_runner_capabilities() {
  const auto installed = installation();
  const auto probes = probe_runners(installed.runners, installed.environments, user_probe_cache());
  auto own = own_probes(probes, installed.runners);
  std::erase_if(own, [](const auto& entry) { return !entry.second.answered; });
  auto capabilities = runner_capabilities(own);
  capabilities["environments"] = environment_capabilities(probes, installed.runners, installed.environments);
  return capabilities;
}

}  // namespace ts::agent
