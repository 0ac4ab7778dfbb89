#include "coordinator/job_registry.hpp"

#include <fmt/format.h>

#include <set>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/log.hpp"
#include "shared/seconds.hpp"
#include "shared/timestamp.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

SweepSettings SweepSettings::of(int64_t sequence, const sweep::Sweep& sweep) {
  return {sequence,           sweep.priority, sweep.node_exclusive, sweep.pinned,
          sweep.requirements, sweep.adaptive, sweep.pair_axis,      sweep.calibration_nodes};
}

JobRegistry::JobRegistry(store::Store& store, WriteBatch& batch, RegistryOptions options, Send send)
    : store_(store), batch_(batch), options_(options), send_(std::move(send)) {}

// ---- jobs ------------------------------------------------------------------

void JobRegistry::track(const store::StoredJob& job, const SweepSettings& settings, bool away) {
  SchedulableJob schedulable;
  schedulable.job_id = job.job_id;
  schedulable.sweep_id = job.sweep_id;
  schedulable.config_key = job.config_key;
  schedulable.runner = job.runner;
  if (const auto env = job_fields::get<nlohmann::json>(job.document, "env"); env.is_string()) schedulable.env = env;
  schedulable.priority = settings.priority;
  schedulable.sweep_sequence = settings.sequence;
  schedulable.ordinal = job.ordinal;
  schedulable.gpus = job.gpus;
  if (const auto hosts = job.document.find("hosts"); hosts != job.document.end() && !hosts->empty()) {
    // A multi-node job reserves the launching agent's share of its GPUs,
    // and keeps its other hosts' agents free (docs/multi-gpu.md).
    const auto nodes = static_cast<int64_t>(hosts->size());
    schedulable.gpus = (job.gpus + nodes - 1) / nodes;
    schedulable.hosts = hosts->get<std::vector<std::string>>();
  }
  schedulable.uses_gpus = job_fields::get<std::string>(job.document, "device").starts_with("cuda");
  schedulable.node_exclusive = settings.node_exclusive;
  // Paired: the pair's jobs share one agent, the first that runs one of them (docs/noise.md).
  schedulable.pinned = settings.pinned || !settings.pair_axis.empty();
  schedulable.pin_key =
      settings.pair_axis.empty() ? job.config_key : sweep::pair_key(job.config_key, settings.pair_axis);
  if (settings.calibration_nodes > 0) {
    // A calibration: round r of a configuration on its (r mod nodes)-th agent, each a different one.
    schedulable.pinned = true;
    schedulable.pin_key = fmt::format("{}\x1fnode {}", job.config_key, job.repeat % settings.calibration_nodes);
    schedulable.spread_key = job.config_key;
  }
  schedulable.requirements = settings.requirements;
  schedulable.attempts = job.attempts;
  Job tracked;
  tracked.sweep_id = job.sweep_id;
  tracked.runner = job.runner;
  tracked.config_key = job.config_key;
  tracked.document = job.document;
  tracked.attempt = job.attempts;
  tracked.max_attempts = job.max_attempts;
  tracked.timeout = milliseconds_from_seconds(job.document.value("timeout_s", options_.default_job_timeout_s));
  tracked.node_exclusive = settings.node_exclusive;
  if (away) {
    tracked.phase = Phase::away;
    tracked.agent = job.agent;
    tracked.until = Clock::now() + options_.reattach_grace;
    scheduler_.hold(std::move(schedulable));
  } else {
    scheduler_.enqueue(std::move(schedulable));
  }
  jobs_[job.job_id] = std::move(tracked);
  sweeps_.try_emplace(job.sweep_id, settings);
}

void JobRegistry::add(const store::StoredJob& job, const SweepSettings& settings) { track(job, settings, false); }

void JobRegistry::resume_unfinished() {
  std::map<std::string, SweepSettings> settings;
  for (const auto& summary : store_.sweeps("", /*recent_finished=*/0)) {
    settings[summary.sweep_id] =
        SweepSettings::of(summary.sequence, sweep::parse(summary.spec, "the stored sweep " + summary.sweep_id));
  }
  std::size_t resumed = 0;
  for (const auto& job : store_.unfinished_jobs()) {
    // A running job may still be running: its agent gets a grace period to
    // come back and say so (docs/operations.md).
    track(job, settings.at(job.sweep_id), job.state == "running" && !job.agent.empty());
    ++resumed;
  }
  if (resumed > 0) log::info("resumed {} unfinished jobs of {} sweeps", resumed, settings.size());
}

std::size_t JobRegistry::cancel(const std::string& sweep_id, const std::string& job_id,
                                store::Store::CancelScope scope) {
  const auto cancelled = cancellable(sweep_id, job_id, scope);
  const auto now = utc_timestamp();
  cancel_some(cancelled, now);
  return cancel_closed(sweep_id, job_id, cancelled.size(), now);
}

std::vector<std::pair<std::string, std::string>> JobRegistry::cancellable(const std::string& sweep_id,
                                                                          const std::string& job_id,
                                                                          store::Store::CancelScope scope) {
  return store_.cancellable(sweep_id, job_id, scope);
}

void JobRegistry::cancel_some(std::span<const std::pair<std::string, std::string>> cancelled, const std::string& now) {
  batch_.open();
  store_.mark_cancelled(cancelled, now);
  for (const auto& [id, state] : cancelled) {
    const auto found = jobs_.find(id);
    if (found == jobs_.end()) continue;
    auto& job = found->second;
    notify(JobEvent::Kind::cancelled, id, job, "cancelled");
    if (job.phase == Phase::running) {
      // Its resources stay taken until the agent says the process is gone.
      job.phase = Phase::cancelling;
      cancel_on_agent(job.agent, id, job.attempt);
    } else {
      scheduler_.release(id);
      jobs_.erase(found);
    }
  }
}

std::size_t JobRegistry::cancel_closed(const std::string& sweep_id, const std::string& job_id, std::size_t count,
                                       const std::string& now) {
  batch_.open();
  store_.close_cancelled(sweep_id, job_id, now);
  log::info("cancelled {} jobs", count);
  dispatch();
  return count;
}

JobRegistry::Job* JobRegistry::current(const std::string& agent, const std::string& job_id, int64_t attempt) {
  const auto found = jobs_.find(job_id);
  if (found == jobs_.end()) return nullptr;
  auto& job = found->second;
  if (job.phase == Phase::queued || job.agent != agent || job.attempt != attempt) return nullptr;
  return &job;
}

void JobRegistry::dispatch() {
  const auto now = Clock::now();
  for (const auto& assignment : scheduler_.schedule()) {
    batch_.open();
    auto& job = jobs_.at(assignment.job_id);
    job.phase = Phase::running;
    job.attempt = assignment.attempt;
    job.agent = assignment.agent;
    job.until = now + deadline(job);
    job.unreported_since.reset();
    auto document = job.document;
    document["attempt"] = assignment.attempt;
    store_.job_started(assignment.job_id, assignment.attempt, assignment.agent);
    // Sent once the store says running: a coordinator that dies before the
    // commit has assigned nothing.
    auto assign = wire::make_message("assign", {{"job_id", assignment.job_id},
                                                {"attempt", assignment.attempt},
                                                {"runner", job.runner},
                                                {"job", document},
                                                {"gpus", assignment.gpus},
                                                {"exclusive", job.node_exclusive},
                                                {"timeout_s", seconds_of(job.timeout)}});
    batch_.after_commit([send = send_, agent = assignment.agent, assign = std::move(assign)] { send(agent, assign); });
    notify(JobEvent::Kind::started, assignment.job_id, job);
  }
}

void JobRegistry::finish(const std::string& job_id, JobEvent::Kind kind, const std::string& state,
                         const std::string& reason) {
  if (state != "cancelled") store_.job_finished(job_id, state, reason);
  scheduler_.release(job_id);
  const auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return;
  notify(kind, job_id, job->second, reason);
  const auto sweep_id = job->second.sweep_id, config_key = job->second.config_key;
  jobs_.erase(job);
  if (state != "cancelled") judge_round(sweep_id, config_key);
}

void JobRegistry::judge_round(const std::string& sweep_id, const std::string& config_key) {
  const auto settings = sweeps_.find(sweep_id);
  if (settings == sweeps_.end() || !settings->second.adaptive) return;
  const auto& rule = *settings->second.adaptive;
  const auto pair = pair_of(rule, config_key);
  for (const auto& [id, job] : jobs_) {
    if (job.sweep_id == sweep_id && pair_of(rule, job.config_key) == pair) return;  // the round is not complete
  }
  // The pair's jobs so far: its configurations, how many rounds, a document of each.
  std::map<std::string, store::StoredJob> last_of;  // config key -> its newest job
  int64_t next_ordinal = 0;
  for (auto& stored : store_.sweep_jobs(sweep_id)) {
    next_ordinal = std::max(next_ordinal, stored.ordinal + 1);
    if (pair_of(rule, stored.config_key) != pair) continue;
    auto& last = last_of[stored.config_key];
    if (last.job_id.empty() || stored.repeat >= last.repeat) last = std::move(stored);
  }
  std::vector<double> reference, other;
  int64_t rounds = 0;
  for (const auto& [key, last] : last_of) {
    rounds = std::max(rounds, last.repeat + 1);
    const auto times = store_.epoch_times(sweep_id, key);
    auto& side = is_reference(rule, key) ? reference : other;
    side.insert(side.end(), times.begin(), times.end());
  }
  const auto decision = decide(rule, rounds, reference, other);
  batch_.open();
  store_.record_adaptive_pair(sweep_id, pair, rounds, decision.half_width, decision.power, to_string(decision.kind));
  if (decision.kind != AdaptiveDecision::Kind::another_round) {
    log::info("sweep {}: pair {} stops after {} rounds: {}", sweep_id, pair, rounds, to_string(decision.kind));
    return;
  }
  std::vector<store::JobRecord> runs;
  for (const auto& [key, last] : last_of) {
    auto document = last.document;
    const auto job_id = fmt::format("{}/{:04}", sweep_id, next_ordinal);
    document["job_id"] = job_id;
    runs.push_back({job_id, next_ordinal++, key, rounds, last.runner, last.gpus, document, last.max_attempts,
                    "measurement", sweep::stored_pair_key(key, settings->second.pair_axis)});
  }
  add_runs(sweep_id, runs, settings->second);
}

void JobRegistry::add_runs(const std::string& sweep_id, const std::vector<store::JobRecord>& runs,
                           const SweepSettings& settings) {
  batch_.open();
  store_.add_jobs(sweep_id, runs);
  for (const auto& run : runs) {
    track({run.job_id, sweep_id, run.config_key, run.runner, "queued", "", run.ordinal, run.repeat, run.gpus, 0,
           run.max_attempts, run.document},
          settings, false);
    notify(JobEvent::Kind::added, run.job_id, jobs_.at(run.job_id));
  }
}

void JobRegistry::attempt_failed(const std::string& job_id, const std::string& reason, bool retryable) {
  auto& job = jobs_.at(job_id);
  if (retryable && job.attempt < job.max_attempts) {
    log::warn("job {} attempt {} failed ({}); queued again", job_id, job.attempt, reason);
    store_.job_requeued(job_id, reason, job.attempt);
    scheduler_.requeue(job_id);
    job.phase = Phase::queued;
    job.queued_at = Clock::now();
    notify(JobEvent::Kind::requeued, job_id, job, reason);
    return;
  }
  const auto why = retryable ? fmt::format("{} (attempt {} of {})", reason, job.attempt, job.max_attempts) : reason;
  log::warn("job {} failed: {}", job_id, why);
  finish(job_id, JobEvent::Kind::failed, "failed", why);
}

void JobRegistry::cancel_on_agent(const std::string& agent, const std::string& job_id, int64_t attempt) {
  send_(agent, wire::make_message("cancel", {{"job", job_id}, {"attempt", attempt}}));
}

void JobRegistry::notify(JobEvent::Kind kind, const std::string& job_id, const Job& job, const std::string& detail) {
  JobEvent event{kind, job.sweep_id, job_id, job.agent, detail, job.attempt, 0, 0};
  if (kind == JobEvent::Kind::started)
    event.queued_seconds = std::chrono::duration<double>(Clock::now() - job.queued_at).count();
  publish(event);
}

void JobRegistry::publish(const JobEvent& event) {
  for (const auto& observer : observers_) observer(event);
}

// ---- agents ----------------------------------------------------------------

void JobRegistry::agent_connected(AgentResources resources, const nlohmann::json& running) {
  batch_.open();
  const auto agent = resources.name;
  scheduler_.add_agent(std::move(resources));
  bool strays = false;
  for (const auto& entry : running) {
    const auto job_id = entry.at("job_id").get<std::string>();
    const auto attempt = entry.at("attempt").get<int64_t>();
    auto* job = current(agent, job_id, attempt);
    if (job != nullptr && job->phase == Phase::away &&
        scheduler_.attach(job_id, agent, entry.value("gpus", std::vector<int64_t>{}))) {
      job->phase = Phase::running;
      // The deadline of an attempt found in the store after a restart is unknown: a whole one again.
      job->until = std::max(job->until, Clock::now() + deadline(*job));
      log::info("job {} attempt {} re-attached to agent {}", job_id, attempt, agent);
      continue;
    }
    // No longer this agent's to run: stopped before the agent gets more.
    strays = true;
    log::info("agent {} still runs job {} attempt {}, which is not its to run; cancelling it", agent, job_id, attempt);
    cancel_on_agent(agent, job_id, attempt);
  }
  scheduler_.block(agent, strays);
  dispatch();
}

void JobRegistry::agent_lost(const std::string& agent) {
  const auto until = Clock::now() + options_.reattach_grace;
  for (const auto& job_id : scheduler_.remove_agent(agent)) {
    auto& job = jobs_.at(job_id);
    if (job.phase == Phase::cancelling) {
      batch_.open();
      finish(job_id, JobEvent::Kind::cancelled, "cancelled", "cancelled");
      continue;
    }
    // Held for the agent: it may only have lost its connection.
    job.phase = Phase::away;
    job.until = until;
  }
  dispatch();
}

void JobRegistry::heartbeat(const std::string& agent, const nlohmann::json& running) {
  std::set<std::string> reported;
  bool strays = false;
  for (const auto& entry : running) {
    const auto job_id = entry.at("job_id").get<std::string>();
    const auto attempt = entry.at("attempt").get<int64_t>();
    if (auto* job = current(agent, job_id, attempt); job != nullptr) {
      job->unreported_since.reset();
      reported.insert(job_id);
      continue;
    }
    // Requeued while the agent was away, superseded or cancelled: it must
    // not perturb what comes next, and the agent gets nothing new meanwhile.
    strays = true;
    cancel_on_agent(agent, job_id, attempt);
  }
  const auto now = Clock::now();
  for (const auto& job_id : scheduler_.running_on(agent)) {
    auto& job = jobs_.at(job_id);
    if (!reported.contains(job_id) && !job.unreported_since) job.unreported_since = now;
  }
  if (scheduler_.block(agent, strays) && !strays) dispatch();
}

void JobRegistry::progress(const std::string& agent, const nlohmann::json& message) {
  const auto job_id = message.at("job_id").get<std::string>();
  if (const auto* job = current(agent, job_id, message.at("attempt").get<int64_t>())) {
    publish({JobEvent::Kind::progress, job->sweep_id, job_id, agent, "", job->attempt,
             message.at("epoch").get<int64_t>(), message.at("epochs").get<int64_t>()});
  }
}

void JobRegistry::refused(const std::string& agent, const nlohmann::json& message) {
  const auto job_id = message.at("job_id").get<std::string>();
  auto* job = current(agent, job_id, message.at("attempt").get<int64_t>());
  if (job == nullptr || job->phase != Phase::running) return;
  batch_.open();
  const auto reason = "agent " + agent + " refused it: " + message.at("reason").get<std::string>();
  log::warn("job {} attempt {}: {}; queued again at no cost", job_id, job->attempt, reason);
  job->attempt -= 1;
  store_.job_requeued(job_id, reason, job->attempt);
  scheduler_.requeue(job_id, /*refund_attempt=*/true);
  job->phase = Phase::queued;
  job->queued_at = Clock::now();
  notify(JobEvent::Kind::requeued, job_id, *job, reason);
  // Whatever made it refuse shows in its next heartbeat; nothing new until then.
  scheduler_.block(agent, true);
  dispatch();
}

nlohmann::json JobRegistry::outcome(const std::string& agent, const AgentMessage& read) {
  const auto& message = read.message;
  const auto job_id = message.at("job_id").get<std::string>();
  const auto attempt = message.at("attempt").get<int64_t>();
  auto ack = wire::make_message("result_ack", {{"job_id", job_id}, {"attempt", attempt}});
  auto* job = current(agent, job_id, attempt);
  if (job == nullptr) {
    // Redelivered after it was stored (acknowledged so the agent forgets
    // it), or an attempt that was given up on: superseded, never stored.
    const bool stored = store_.has_result(job_id, attempt);
    if (!stored) ack["superseded"] = true;
    log::info("agent {}: {} outcome of job {} attempt {}", agent, stored ? "a redelivered" : "a superseded", job_id,
              attempt);
    return ack;
  }
  batch_.open();
  if (job->phase == Phase::cancelling) {
    finish(job_id, JobEvent::Kind::cancelled, "cancelled", "cancelled");
  } else if (read.type == "job_result" && !read.claims_attempt) {
    attempt_failed(job_id, "the runner's result names another job or attempt", false);
  } else if (read.type == "job_result") {
    if (read.prepared) {
      store_.ingest_result(*read.prepared, agent);
      finish(job_id, JobEvent::Kind::done, "done", "");
    } else {
      attempt_failed(job_id, "its result document is invalid: " + read.invalid, false);
    }
  } else {
    if (read.prepared) {
      store_.ingest_result(*read.prepared, agent);
    } else if (!read.invalid.empty()) {
      log::warn("job {}: not storing an invalid failed result: {}", job_id, read.invalid);
    }
    auto reason = message.at("reason").get<std::string>();
    if (const auto tail = message.value("stderr_tail", ""); !tail.empty()) {
      reason += "; stderr ends: " + tail.substr(tail.size() > 1024 ? tail.size() - 1024 : 0);
    }
    attempt_failed(job_id, reason, message.at("retryable").get<bool>());
  }
  dispatch();
  return ack;
}

void JobRegistry::expire(Clock::time_point now) {
  std::vector<std::pair<std::string, std::string>> due;  // job, why it is taken back
  std::vector<std::string> cancelled;
  for (auto& [job_id, job] : jobs_) {
    if (job.phase == Phase::away && now >= job.until) {
      due.emplace_back(job_id, "agent " + job.agent + " did not come back to report the attempt");
    } else if (job.phase == Phase::running && now >= job.until) {
      cancel_on_agent(job.agent, job_id, job.attempt);
      scheduler_.block(job.agent, true);  // until its heartbeats show the attempt gone
      due.emplace_back(job_id, fmt::format("no outcome from agent {} within the coordinator's deadline ({:.0f} s)",
                                           job.agent, seconds_of(deadline(job))));
    } else if (job.phase == Phase::running && job.unreported_since &&
               now >= *job.unreported_since + options_.reattach_grace) {
      due.emplace_back(job_id, "agent " + job.agent + " no longer reports running it");
    } else if (job.phase == Phase::cancelling && now >= job.until) {
      cancelled.push_back(job_id);
    }
  }
  if (due.empty() && cancelled.empty()) return;
  batch_.open();
  for (const auto& [job_id, reason] : due) attempt_failed(job_id, reason, true);
  for (const auto& job_id : cancelled) finish(job_id, JobEvent::Kind::cancelled, "cancelled", "cancelled");
  dispatch();
}

}  // namespace ts::coordinator
