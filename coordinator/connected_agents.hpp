#pragma once
// The agents connected now, by name: each one's connection, what it said in
// its hello, and when it was last heard. One entry a name: an agent that
// reconnects replaces its previous session.
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "shared/wire/connection.hpp"

namespace ts::coordinator {

struct ConnectedAgent {
  std::shared_ptr<wire::Connection> connection;
  nlohmann::json capabilities, labels;
  std::chrono::steady_clock::time_point connected_at, last_heard;
  // What status says of it that does not change while it is connected
  // (name, address, hostname, cores, GPUs, labels, runners), made once:
  // at thousands of agents, status is otherwise mostly this.
  nlohmann::json described;

  static ConnectedAgent of(const std::string& name, std::shared_ptr<wire::Connection> connection,
                           nlohmann::json capabilities, nlohmann::json labels);
};

class ConnectedAgents {
 public:
  // Stops and forgets the session of `name`; returns whether there was one.
  bool drop(const std::string& name);
  void add(const std::string& name, ConnectedAgent agent);
  // Removes `name` while `connection` is still its session (a replaced
  // session's end removes nothing); returns whether it did.
  bool disconnect(const std::string& name, const wire::Connection& connection);
  void heard(const std::string& name);
  // To `name` if it is connected; else dropped (the registry reconciles).
  void send(const std::string& name, const nlohmann::json& message) const;
  void send_to_all(const nlohmann::json& message) const;
  const std::map<std::string, ConnectedAgent>& all() const { return agents_; }

 private:
  std::map<std::string, ConnectedAgent> agents_;
};

}  // namespace ts::coordinator
