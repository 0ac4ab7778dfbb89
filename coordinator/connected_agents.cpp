#include "coordinator/connected_agents.hpp"

namespace ts::coordinator {

ConnectedAgent ConnectedAgent::of(const std::string& name, std::shared_ptr<wire::Connection> connection,
                                  nlohmann::json capabilities, nlohmann::json labels) {
  const auto now = std::chrono::steady_clock::now();
  nlohmann::json described{{"name", name},
                           {"address", connection->peer()},
                           {"hostname", capabilities.value("hostname", "")},
                           {"cpu_cores", capabilities.value("cpu_cores", 0)},
                           {"gpus", capabilities.contains("gpus") ? capabilities["gpus"].size() : 0},
                           {"labels", labels},
                           {"runners", capabilities.value("runners", nlohmann::json::array())}};
  return {std::move(connection), std::move(capabilities), std::move(labels), now, now, std::move(described)};
}

bool ConnectedAgents::drop(const std::string& name) {
  const auto found = agents_.find(name);
  if (found == agents_.end()) return false;
  found->second.connection->stop();
  agents_.erase(found);
  return true;
}

void ConnectedAgents::add(const std::string& name, ConnectedAgent agent) {
  agents_.insert_or_assign(name, std::move(agent));
}

bool ConnectedAgents::disconnect(const std::string& name, const wire::Connection& connection) {
  const auto found = agents_.find(name);
  if (found == agents_.end() || found->second.connection.get() != &connection) return false;
  agents_.erase(found);
  return true;
}

void ConnectedAgents::heard(const std::string& name) {
  if (const auto found = agents_.find(name); found != agents_.end()) {
    found->second.last_heard = std::chrono::steady_clock::now();
  }
}

void ConnectedAgents::send(const std::string& name, const nlohmann::json& message) const {
  if (const auto found = agents_.find(name); found != agents_.end()) found->second.connection->send(message);
}

void ConnectedAgents::send_to_all(const nlohmann::json& message) const {
  for (const auto& [name, agent] : agents_) agent.connection->send(message);
}

}  // namespace ts::coordinator
