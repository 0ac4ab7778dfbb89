#include "coordinator/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ts::coordinator {

AgentResources AgentResources::from_hello(const nlohmann::json& hello) {
  AgentResources agent;
  agent.name = hello.at("name").get<std::string>();
  const auto capabilities = hello.value("capabilities", nlohmann::json::object());
  for (const auto& gpu : capabilities.value("gpus", nlohmann::json::array())) {
    agent.gpus.push_back(
        {gpu.at("index").get<int64_t>(), gpu.at("name").get<std::string>(), gpu.at("memory_bytes").get<int64_t>()});
  }
  for (const auto& runner : capabilities.value("runners", nlohmann::json::array())) agent.runners.insert(runner);
  const auto environments = capabilities.value("environments", nlohmann::json::object());
  for (const auto& [name, environment] : environments.items()) {
    for (const auto& [runner, versions] : environment.at("runners").items()) agent.placements.emplace(runner, name);
  }
  agent.labels = hello.value("labels", std::map<std::string, std::string>{});
  return agent;
}

namespace {

// Whether the agent runs the job's runner in the job's environment.
bool runs(const AgentResources& agent, const SchedulableJob& job) {
  return job.env.empty() ? agent.runners.contains(job.runner) : agent.placements.contains({job.runner, job.env});
}

bool carries_labels(const AgentResources& agent, const Requirements& requirements) {
  return std::all_of(requirements.labels.begin(), requirements.labels.end(), [&](const auto& required) {
    const auto label = agent.labels.find(required.first);
    return label != agent.labels.end() && label->second == required.second;
  });
}

}  // namespace

void Scheduler::add_agent(AgentResources agent) {
  const auto name = agent.name;
  agents_[name] = AgentState{std::move(agent), {}, {}, false, false, false, std::nullopt};
  // Back while a multi-node job it is a host of still runs: kept free again.
  for (auto& [job_id, running] : running_) {
    if (running.agent != name && host_agents(jobs_.at(job_id)).contains(name)) keep(name, job_id, running);
  }
  dirty_agents_.insert(name);
}

std::vector<std::string> Scheduler::remove_agent(const std::string& name) {
  const auto found = agents_.find(name);
  if (found == agents_.end()) return {};
  if (const auto& kept_for = found->second.kept_for) running_.at(*kept_for).reserved.erase(name);
  std::vector<std::string> orphans(found->second.jobs.begin(), found->second.jobs.end());
  for (const auto& job_id : orphans) {
    free_reserved(running_.at(job_id));
    running_.erase(job_id);
  }
  agents_.erase(found);
  dirty_agents_.erase(name);
  std::erase_if(pins_, [&](const auto& pin) { return pin.second == name; });
  for (auto& [key, agents] : spread_agents_) agents.erase(name);
  return orphans;
}

Scheduler::QueueKey Scheduler::key_of(const SchedulableJob& job) {
  return {-job.priority, job.sweep_sequence, job.ordinal, job.job_id};
}

std::string Scheduler::class_of(const SchedulableJob& job) {
  auto key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", job.runner, job.env, job.uses_gpus, job.gpus,
                         job.node_exclusive, job.requirements.gpu_type, job.requirements.min_gpu_memory_gb);
  for (const auto& [label, value] : job.requirements.labels) key += fmt::format("\x1f{}={}", label, value);
  // A pinned job's agent is its configuration's (or pair's) own; hosts name its agents.
  if (job.pinned) key += fmt::format("\x1epin\x1f{}\x1f{}", job.sweep_id, job.pin_key);
  for (const auto& host : job.hosts) key += "\x1ehost\x1f" + host;
  return key;
}

void Scheduler::queue(const SchedulableJob& job) {
  if (classes_[class_of(job)].insert(key_of(job)).second) ++queued_;
}

void Scheduler::dequeue(const SchedulableJob& job) {
  const auto found = classes_.find(class_of(job));
  if (found == classes_.end() || found->second.erase(key_of(job)) == 0) return;
  --queued_;
  if (found->second.empty()) classes_.erase(found);
}

void Scheduler::enqueue(SchedulableJob job) {
  queue(job);
  const auto id = job.job_id;
  jobs_[id] = std::move(job);
  queue_grew_ = true;
}

void Scheduler::hold(SchedulableJob job) {
  const auto id = job.job_id;
  jobs_[id] = std::move(job);
}

bool Scheduler::attach(const std::string& job_id, const std::string& agent, const std::vector<int64_t>& gpus) {
  const auto job = jobs_.find(job_id);
  const auto state = agents_.find(agent);
  if (job == jobs_.end() || state == agents_.end() || running_.contains(job_id)) return false;
  for (const auto gpu : gpus) {
    if (state->second.busy_gpus.contains(gpu)) return false;
  }
  dequeue(job->second);
  occupy(job->second, state->second, gpus);
  return true;
}

bool Scheduler::release(const std::string& job_id) {
  const auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return false;
  if (const auto running = running_.find(job_id); running != running_.end()) {
    if (const auto agent = agents_.find(running->second.agent); agent != agents_.end()) {
      auto& state = agent->second;
      for (const auto gpu : running->second.gpus) state.busy_gpus.erase(gpu);
      if (running->second.cpu) state.cpu_busy = false;
      if (job->second.node_exclusive) state.exclusive_busy = false;
      state.jobs.erase(job_id);
      dirty_agents_.insert(agent->first);
    }
    free_reserved(running->second);
    running_.erase(running);
  }
  dequeue(job->second);
  jobs_.erase(job);
  return true;
}

void Scheduler::requeue(const std::string& job_id, bool refund_attempt) {
  const auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return;
  auto copy = job->second;
  if (refund_attempt) copy.attempts -= 1;
  release(job_id);
  enqueue(std::move(copy));
}

bool Scheduler::block(const std::string& agent, bool blocked) {
  const auto found = agents_.find(agent);
  if (found == agents_.end() || found->second.blocked == blocked) return false;
  found->second.blocked = blocked;
  if (!blocked) dirty_agents_.insert(agent);
  return true;
}

std::set<std::string> Scheduler::host_agents(const SchedulableJob& job) const {
  std::set<std::string> names;
  for (const auto& host : job.hosts) {
    if (auto name = host.substr(0, host.find(':')); agents_.contains(name)) names.insert(std::move(name));
  }
  return names;
}

bool Scheduler::holds(const SchedulableJob& job, const std::string& agent) const {
  const auto nodes = host_agents(job);
  // Only for a job that can start once its nodes are idle: none blocked,
  // one of them able to launch it (its runner, labels and GPU count).
  const auto could_launch = [&](const std::string& node) {
    const auto& resources = agents_.at(node).resources;
    return runs(resources, job) && carries_labels(resources, job.requirements) &&
           (!job.uses_gpus || static_cast<int64_t>(resources.gpus.size()) >= job.gpus);
  };
  return nodes.contains(agent) &&
         std::none_of(nodes.begin(), nodes.end(), [&](const auto& node) { return agents_.at(node).blocked; }) &&
         std::any_of(nodes.begin(), nodes.end(), could_launch);
}

void Scheduler::keep(const std::string& node, const std::string& job_id, RunningJob& running) {
  // A node kept for another job already (a re-attach after a restart) stays that job's.
  auto& state = agents_.at(node);
  if (state.kept_for) return;
  state.kept_for = job_id;
  running.reserved.insert(node);
}

void Scheduler::free_reserved(RunningJob& job) {
  for (const auto& name : job.reserved) {
    if (const auto node = agents_.find(name); node != agents_.end()) {
      node->second.kept_for.reset();
      dirty_agents_.insert(name);
    }
  }
  job.reserved.clear();
}

std::optional<std::vector<int64_t>> Scheduler::fit(const SchedulableJob& job, const AgentState& agent) const {
  const auto& resources = agent.resources;
  if (agent.blocked || agent.exclusive_busy || agent.kept_for || (job.node_exclusive && !agent.jobs.empty())) {
    return std::nullopt;
  }
  // A multi-node job whose hosts run agents starts from one of them, when
  // the others are idle: its ranks there must not share the node.
  if (const auto nodes = host_agents(job); !nodes.empty()) {
    if (!nodes.contains(resources.name)) return std::nullopt;
    for (const auto& node : nodes) {
      const auto& peer = agents_.at(node);
      if (node != resources.name && (peer.blocked || peer.kept_for || !peer.jobs.empty())) return std::nullopt;
    }
  }
  if (!runs(resources, job) || !carries_labels(resources, job.requirements)) return std::nullopt;
  if (job.pinned) {
    const auto pin = pins_.find({job.sweep_id, job.pin_key});
    if (pin != pins_.end() && pin->second != resources.name) return std::nullopt;
    if (pin == pins_.end() && !job.spread_key.empty()) {
      const auto spread = spread_agents_.find({job.sweep_id, job.spread_key});
      if (spread != spread_agents_.end() && spread->second.contains(resources.name)) return std::nullopt;
    }
  }
  if (!job.uses_gpus) {
    if (agent.cpu_busy) return std::nullopt;
    return std::vector<int64_t>{};
  }
  const auto min_bytes = static_cast<int64_t>(job.requirements.min_gpu_memory_gb * 1e9);
  std::vector<int64_t> chosen;
  for (const auto& gpu : resources.gpus) {
    if (agent.busy_gpus.contains(gpu.index) || gpu.memory_bytes < min_bytes) continue;
    if (!job.requirements.gpu_type.empty() && gpu.name.find(job.requirements.gpu_type) == std::string::npos) continue;
    chosen.push_back(gpu.index);
    if (static_cast<int64_t>(chosen.size()) == job.gpus) return chosen;
  }
  return std::nullopt;
}

void Scheduler::occupy(const SchedulableJob& job, AgentState& agent, const std::vector<int64_t>& gpus) {
  agent.busy_gpus.insert(gpus.begin(), gpus.end());
  agent.cpu_busy = agent.cpu_busy || !job.uses_gpus;
  agent.exclusive_busy = agent.exclusive_busy || job.node_exclusive;
  agent.jobs.insert(job.job_id);
  auto& running = running_[job.job_id] = RunningJob{agent.resources.name, gpus, !job.uses_gpus, {}};
  for (const auto& node : host_agents(job)) {
    if (node != agent.resources.name) keep(node, job.job_id, running);
  }
  if (job.pinned && pins_.emplace(std::make_pair(job.sweep_id, job.pin_key), agent.resources.name).second &&
      !job.spread_key.empty())
    spread_agents_[{job.sweep_id, job.spread_key}].insert(agent.resources.name);
}

std::vector<Assignment> Scheduler::schedule() {
  std::vector<std::string> candidates;
  if (queue_grew_) {
    for (const auto& [name, state] : agents_) candidates.push_back(name);
  } else {
    candidates.assign(dirty_agents_.begin(), dirty_agents_.end());
  }
  queue_grew_ = false;
  dirty_agents_.clear();
  std::vector<Assignment> assignments;
  for (const auto& name : candidates) {
    auto& agent = agents_.at(name);
    while (!classes_.empty()) {
      // Cheap test first: an agent that can take nothing more is not scanned.
      const bool has_free_gpu = agent.busy_gpus.size() < agent.resources.gpus.size();
      if (agent.blocked || agent.exclusive_busy || agent.kept_for || (agent.cpu_busy && !has_free_gpu)) break;
      // Each class's first job, in queue order.
      std::vector<const QueueKey*> heads;
      heads.reserve(classes_.size());
      for (const auto& [key, queued] : classes_) heads.push_back(&*queued.begin());
      std::sort(heads.begin(), heads.end(), [](const QueueKey* a, const QueueKey* b) { return *a < *b; });
      SchedulableJob* chosen = nullptr;
      std::optional<std::vector<int64_t>> gpus;
      for (const auto* head : heads) {
        auto& job = jobs_.at(std::get<3>(*head));
        gpus = fit(job, agent);
        if (gpus) {
          chosen = &job;
          break;
        }
        // A node waits for a multi-node job queued before what it could run
        // instead, or later jobs would starve it.
        if (!job.hosts.empty() && holds(job, name)) break;
      }
      if (chosen == nullptr) break;
      dequeue(*chosen);
      occupy(*chosen, agent, *gpus);
      chosen->attempts += 1;
      assignments.push_back({chosen->job_id, name, chosen->attempts, *gpus});
    }
  }
  return assignments;
}

bool Scheduler::is_running(const std::string& job_id) const { return running_.contains(job_id); }

bool Scheduler::is_queued(const std::string& job_id) const {
  const auto job = jobs_.find(job_id);
  return job != jobs_.end() && !running_.contains(job_id);
}

std::optional<std::string> Scheduler::agent_of(const std::string& job_id) const {
  const auto running = running_.find(job_id);
  if (running == running_.end()) return std::nullopt;
  return running->second.agent;
}

std::vector<std::string> Scheduler::running_on(const std::string& agent) const {
  const auto found = agents_.find(agent);
  if (found == agents_.end()) return {};
  return {found->second.jobs.begin(), found->second.jobs.end()};
}

}  // namespace ts::coordinator
