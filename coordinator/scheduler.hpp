#pragma once
// Which queued job runs on which agent, and on which of its GPUs. Pure
// bookkeeping, no I/O: the coordinator persists what it decides. Rules
// (docs/scheduling.md): higher priority first, then older sweeps, then each
// sweep's interleaved order; a job goes to an agent that has its runner, the
// required labels and enough free GPUs of the required kind and memory;
// never two jobs on one GPU, at most one CPU job per agent, nothing beside a
// node-exclusive job; repeats of a pinned sweep stay on the agent that ran
// the first one; a multi-node job whose hosts run agents is launched from
// one of them and keeps the others free while it runs.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "shared/sweep/sweep.hpp"

namespace ts::coordinator {

struct GpuInfo {
  int64_t index = 0;
  std::string name;
  int64_t memory_bytes = 0;
};

struct AgentResources {
  std::string name;
  std::vector<GpuInfo> gpus;
  std::set<std::string> runners;  // in their own environments
  std::map<std::string, std::string> labels;
  std::set<std::pair<std::string, std::string>> placements{};  // (runner, environment) it offers

  // From an agent's hello (schemas/protocol/hello.schema.json).
  static AgentResources from_hello(const nlohmann::json& hello);
};

// Where a job may run, as its sweep asks (parsed once, shared/sweep/sweep.hpp).
using Requirements = sweep::Requirements;

struct SchedulableJob {
  std::string job_id, sweep_id, config_key, runner = "libtorch";
  std::string env;  // the job's env (docs/environments.md); empty: the runner's own
  int64_t priority = 0;
  int64_t sweep_sequence = 0;  // submission order of its sweep
  int64_t ordinal = 0;
  int64_t gpus = 1;
  bool uses_gpus = false;  // device cuda*: `gpus` GPUs; otherwise CPU ranks, no GPU
  bool node_exclusive = true;
  bool pinned = false;
  std::string pin_key;  // what a pinned job's agent is kept for: its configuration, or its pair's (pairing)
  // Pinned jobs of one spread key (a calibration's configuration) with
  // different pin keys (its node slots) never share an agent.
  std::string spread_key;
  Requirements requirements;
  int64_t attempts = 0;  // attempts made so far
  // A multi-node job's hosts (the job's `hosts`, HOST or HOST:SLOTS); those
  // that name an agent are the job's nodes for as long as it runs.
  std::vector<std::string> hosts;
};

struct Assignment {
  std::string job_id, agent;
  int64_t attempt = 1;
  std::vector<int64_t> gpus;
};

class Scheduler {
 public:
  void add_agent(AgentResources agent);
  // Forgets the agent; returns the jobs that were running on it.
  std::vector<std::string> remove_agent(const std::string& name);

  void enqueue(SchedulableJob job);
  // Knows the job without queueing it: it may still run on an agent that
  // is away (after a coordinator restart or a lost connection), until
  // attach() or requeue().
  void hold(SchedulableJob job);
  // Records that `agent` is running the held job on `gpus` (it said so on
  // reconnecting); false if the agent or job is unknown or the GPUs are taken.
  bool attach(const std::string& job_id, const std::string& agent, const std::vector<int64_t>& gpus);
  // Frees what a running job held, or drops a queued job; returns false for
  // an unknown job.
  bool release(const std::string& job_id);
  // Puts a running job back in the queue. Its attempts count is kept, or
  // taken back by one when the attempt never ran (the agent refused it).
  void requeue(const std::string& job_id, bool refund_attempt = false);
  // A blocked agent gets no new job (it still runs what it should not);
  // returns whether that changed.
  bool block(const std::string& agent, bool blocked);

  // Every assignment that fits now, in priority order.
  std::vector<Assignment> schedule();

  bool is_running(const std::string& job_id) const;
  bool is_queued(const std::string& job_id) const;
  // The agent running `job_id`, when it is running.
  std::optional<std::string> agent_of(const std::string& job_id) const;
  std::size_t queued() const { return queued_; }
  std::size_t running() const { return running_.size(); }
  std::vector<std::string> running_on(const std::string& agent) const;

 private:
  using QueueKey = std::tuple<int64_t, int64_t, int64_t, std::string>;  // -priority, sweep, ordinal, id
  struct AgentState {
    AgentResources resources;
    std::set<int64_t> busy_gpus;
    std::set<std::string> jobs;
    bool cpu_busy = false;
    bool exclusive_busy = false;
    bool blocked = false;
    std::optional<std::string> kept_for;  // the multi-node job this node runs a rank of, launched elsewhere
  };
  struct RunningJob {
    std::string agent;
    std::vector<int64_t> gpus;
    bool cpu = false;
    std::set<std::string> reserved;  // a multi-node job's other hosts' agents
  };

  static QueueKey key_of(const SchedulableJob& job);
  // Jobs of one class fit the same agents alike (runner, resources,
  // requirements, exclusivity, pin, hosts): an agent tests the first queued
  // job of each class, not every queued job.
  static std::string class_of(const SchedulableJob& job);
  void queue(const SchedulableJob& job);
  void dequeue(const SchedulableJob& job);
  std::optional<std::vector<int64_t>> fit(const SchedulableJob& job, const AgentState& agent) const;
  void occupy(const SchedulableJob& job, AgentState& agent, const std::vector<int64_t>& gpus);
  // The agents among a multi-node job's hosts, by name.
  std::set<std::string> host_agents(const SchedulableJob& job) const;
  // Whether a multi-node job that does not fit on `agent` now must still be
  // waited for there: `agent` is one of its hosts, none of them blocked.
  bool holds(const SchedulableJob& job, const std::string& agent) const;
  // Keeps `node` for the multi-node job `job_id`, unless it is kept for another.
  void keep(const std::string& node, const std::string& job_id, RunningJob& running);
  void free_reserved(RunningJob& job);

  std::map<std::string, AgentState> agents_;
  std::map<std::string, SchedulableJob> jobs_;
  // The queue, by class_of(job); each class in queue order.
  std::map<std::string, std::set<QueueKey>> classes_;
  std::size_t queued_ = 0;
  std::map<std::string, RunningJob> running_;
  std::map<std::pair<std::string, std::string>, std::string> pins_;  // (sweep, pin key) -> agent
  // (sweep, spread key) -> the agents its pins hold
  std::map<std::pair<std::string, std::string>, std::set<std::string>> spread_agents_;
  std::set<std::string> dirty_agents_;  // agents whose capacity grew since the last schedule()
  bool queue_grew_ = false;
};

}  // namespace ts::coordinator
