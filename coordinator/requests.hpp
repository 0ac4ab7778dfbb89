#pragma once
// What a client may ask of the coordinator (docs/protocol.md): submit a
// sweep, cancel, rerun configurations, status. Each handler validates
// before it changes anything, so a bad request changes nothing; the
// sessions (coordinator/session.hpp) carry requests in and replies out.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/connected_agents.hpp"
#include "coordinator/job_registry.hpp"
#include "coordinator/joining_peers.hpp"
#include "coordinator/write_batch.hpp"
#include "store/store.hpp"

namespace ts::coordinator {

// The current sweeps, for status and the metrics: every active one and the
// last this many finished.
inline constexpr int64_t finished_sweeps_shown = 10;

struct Submission {
  std::string sweep_id, name;
  std::size_t jobs = 0, configurations = 0;
  std::vector<std::string> warnings;  // e.g. a runner no agent has reported yet
};

class Requests {
 public:
  Requests(store::Store& store, WriteBatch& batch, JobRegistry& registry, const ConnectedAgents& agents,
           const JoiningPeers& joining)
      : store_(store), batch_(batch), registry_(registry), agents_(agents), joining_(joining) {}

  // Validates, expands and stores a sweep, then queues its jobs. Throws
  // ts::InvalidInput naming `origin` and the field of a bad sweep, or a
  // model no runner runs as the agents that ever registered reported, with
  // `also_known` (capabilities of agents about to connect: `run`'s own).
  Submission submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter,
                    const std::vector<nlohmann::json>& also_known = {});
  // Cancels a sweep (id or name) or a job (id); returns how many jobs stopped.
  std::size_t cancel(const std::string& sweep, const std::string& job,
                     store::Store::CancelScope scope = store::Store::CancelScope::unfinished);
  // Adds `runs` confirmation runs of each configuration (jobs.config_key)
  // of a sweep (id or name): copies of each one's newest job. Returns the
  // sweep id and the new job ids; an unknown sweep or configuration changes nothing.
  std::pair<std::string, std::vector<std::string>> rerun(const std::string& sweep,
                                                         const std::vector<std::string>& configurations, int64_t runs);
  // The sweep asked for (or the current ones), the connected agents and the
  // connections still joining.
  nlohmann::json status_reply(const std::string& sweep = "");
  // The reply to a client's message of `type`; throws ts::InvalidInput for
  // a bad request or a type clients may not send.
  nlohmann::json answer(const std::string& type, const nlohmann::json& request);

 private:
  // The id of a sweep given by id or name; throws ts::InvalidInput naming it.
  std::string sweep_id_of(const std::string& id_or_name);

  store::Store& store_;
  WriteBatch& batch_;
  JobRegistry& registry_;
  const ConnectedAgents& agents_;
  const JoiningPeers& joining_;
};

}  // namespace ts::coordinator
