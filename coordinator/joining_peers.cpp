#include "coordinator/joining_peers.hpp"

#include <algorithm>

namespace ts::coordinator {

void JoiningPeers::add(const wire::Connection& connection) {
  since_.emplace(&connection, std::chrono::steady_clock::now());
}

void JoiningPeers::remove(const wire::Connection& connection) { since_.erase(&connection); }

nlohmann::json JoiningPeers::describe(std::chrono::steady_clock::time_point now) const {
  std::vector<std::pair<std::chrono::steady_clock::time_point, const wire::Connection*>> joining;
  for (const auto& [connection, since] : since_) joining.emplace_back(since, connection);
  std::sort(joining.begin(), joining.end());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [since, connection] : joining) {
    out.push_back({{"address", connection->peer()},
                   {"joining_s", std::chrono::duration<double>(now - since).count()},
                   {"received_bytes", connection->received()}});
  }
  return out;
}

}  // namespace ts::coordinator
