#pragma once
// The one owner of job and attempt state in the coordinator. Every active
// job (queued, running on an agent, held for an agent that is away, or
// being cancelled) lives here once; the store's `jobs` rows are written from
// here, the Scheduler is told what to place, and assignments, cancels and
// status are derived from it. The rules (docs/operations.md):
//  - (job, attempt) names an attempt everywhere; only the current attempt's
//    outcome is stored, a late one of an earlier attempt is "superseded";
//  - an agent that refuses an assignment gets it taken back at once, and
//    the refusal costs no attempt;
//  - heartbeats reconcile both ways: the agent is told to stop what it runs
//    but should not (and gets nothing new until it has), and an attempt the
//    agent no longer reports is queued again after the grace period;
//  - every running attempt has a deadline here too: its timeout plus a
//    margin, past which it is taken back whatever the agent says.
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "coordinator/adaptive_repeats.hpp"
#include "coordinator/agent_message.hpp"
#include "coordinator/scheduler.hpp"
#include "coordinator/write_batch.hpp"
#include "store/store.hpp"

namespace ts::coordinator {

// What happened to a job, for observers such as `torchsweep run`.
struct JobEvent {
  enum class Kind { started, progress, done, failed, requeued, cancelled, added };
  Kind kind = Kind::started;
  std::string sweep_id, job_id, agent, detail;
  int64_t attempt = 0, epoch = 0, epochs = 0;
  double queued_seconds = 0;  // started: how long the job waited in the queue
};

// How a sweep's jobs are placed (from its spec).
struct SweepSettings {
  int64_t sequence = 0, priority = 0;
  bool node_exclusive = true, pinned = false;
  Requirements requirements;
  std::optional<AdaptiveRule> adaptive;
  std::string pair_axis;          // pairing.by; empty: none
  int64_t calibration_nodes = 0;  // calibration.nodes; 0: not a calibration

  static SweepSettings of(int64_t sequence, const sweep::Sweep& sweep);
};

struct RegistryOptions {
  // How long a running job waits for its agent to come back (after a lost
  // connection or a coordinator restart), and how long an attempt may be
  // missing from its agent's heartbeats, before it is queued again.
  std::chrono::milliseconds reattach_grace{10000};
  // Added to a job's timeout_s: the coordinator's own deadline per attempt.
  std::chrono::milliseconds deadline_margin{30000};
  double default_job_timeout_s = 3600;  // when a job gives no timeout_s
};

class JobRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  // Queues `message` on the session of the connected agent `agent`.
  using Send = std::function<void(const std::string& agent, const nlohmann::json& message)>;

  JobRegistry(store::Store& store, WriteBatch& batch, RegistryOptions options, Send send);
  // Adds an observer of job events (`torchsweep run`, the metrics).
  void on_event(std::function<void(const JobEvent&)> observer) { observers_.push_back(std::move(observer)); }

  // Queues the unfinished jobs of the store's active sweeps; running ones
  // wait for their agent (reattach_grace) first.
  void resume_unfinished();
  // Tracks and queues a job just added to the store.
  void add(const store::StoredJob& job, const SweepSettings& settings);
  // The one way runs are added to a sweep (another adaptive round, the
  // confirmation reruns): new jobs in the store, tracked and queued. A
  // finished sweep is active again; `settings` place them.
  void add_runs(const std::string& sweep_id, const std::vector<store::JobRecord>& runs, const SweepSettings& settings);
  // Cancels a sweep's (or one job's) unfinished jobs, or those `scope`
  // names; returns how many.
  std::size_t cancel(const std::string& sweep_id, const std::string& job_id,
                     store::Store::CancelScope scope = store::Store::CancelScope::unfinished);
  // The same in parts (a large sweep's cancel, in the loop's turns, under a
  // held write batch): the jobs it takes; those cancelled a chunk at a time
  // (at `now`); then the sweep closed and a dispatch. Returns `count`.
  std::vector<std::pair<std::string, std::string>> cancellable(const std::string& sweep_id, const std::string& job_id,
                                                               store::Store::CancelScope scope);
  void cancel_some(std::span<const std::pair<std::string, std::string>> cancelled, const std::string& now);
  std::size_t cancel_closed(const std::string& sweep_id, const std::string& job_id, std::size_t count,
                            const std::string& now);

  // An agent said hello; `running` lists the attempts it runs (hello.running).
  void agent_connected(AgentResources resources, const nlohmann::json& running);
  void agent_lost(const std::string& agent);
  // heartbeat.running: the (job, attempt) pairs the agent runs now.
  void heartbeat(const std::string& agent, const nlohmann::json& running);
  void progress(const std::string& agent, const nlohmann::json& message);
  // job_result or job_failed, as the pool read it; returns the result_ack
  // to send once committed.
  nlohmann::json outcome(const std::string& agent, const AgentMessage& read);
  void refused(const std::string& agent, const nlohmann::json& message);
  // Takes back the attempts whose agent stayed away, that their agent no
  // longer reports, or that outlived their deadline.
  void expire(Clock::time_point now);
  // Assigns whatever fits now; the assignments leave once committed.
  void dispatch();

  std::vector<std::string> running_on(const std::string& agent) const { return scheduler_.running_on(agent); }

 private:
  enum class Phase { queued, running, away, cancelling };
  struct Job {
    std::string sweep_id, runner, config_key;
    nlohmann::json document;
    int64_t attempt = 0, max_attempts = 3;
    std::chrono::milliseconds timeout{0};
    bool node_exclusive = true;
    Phase phase = Phase::queued;
    Clock::time_point queued_at = Clock::now();  // since when it waits in the queue
    std::string agent;
    // running/cancelling: the attempt's deadline; away: the end of the grace.
    Clock::time_point until;
    // Since when the agent's heartbeats no longer list the running attempt.
    std::optional<Clock::time_point> unreported_since;
  };

  void track(const store::StoredJob& job, const SweepSettings& settings, bool away);
  // How long an attempt of `job` may run before the coordinator takes it back.
  std::chrono::milliseconds deadline(const Job& job) const { return job.timeout + options_.deadline_margin; }
  // The job whose current attempt `agent` reports on, or nullptr.
  Job* current(const std::string& agent, const std::string& job_id, int64_t attempt);
  void finish(const std::string& job_id, JobEvent::Kind kind, const std::string& state, const std::string& reason);
  // An attempt ended without a result: retried while attempts remain.
  void attempt_failed(const std::string& job_id, const std::string& reason, bool retryable);
  void cancel_on_agent(const std::string& agent, const std::string& job_id, int64_t attempt);
  // After a job of an adaptive sweep ended: once its pair's round is
  // complete, the rule decides, and another round is added if it says so.
  void judge_round(const std::string& sweep_id, const std::string& config_key);
  void notify(JobEvent::Kind kind, const std::string& job_id, const Job& job, const std::string& detail = "");
  void publish(const JobEvent& event);  // to every observer

  store::Store& store_;
  WriteBatch& batch_;
  RegistryOptions options_;
  Send send_;
  Scheduler scheduler_;
  std::map<std::string, Job> jobs_;
  std::map<std::string, SweepSettings> sweeps_;  // of the tracked jobs' sweeps
  std::vector<std::function<void(const JobEvent&)>> observers_;
};

}  // namespace ts::coordinator
