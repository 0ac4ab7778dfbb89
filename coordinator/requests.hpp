#pragma once
// What a client may ask of the coordinator (docs/protocol.md): submit a
// sweep, cancel, rerun configurations, status. Each handler validates
// before it changes anything, so a bad request changes nothing; the
// sessions (coordinator/session.hpp) carry requests in and replies out.
#include <boost/asio.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/connected_agents.hpp"
#include "coordinator/job_registry.hpp"
#include "coordinator/joining_peers.hpp"
#include "coordinator/turns.hpp"
#include "coordinator/write_batch.hpp"
#include "shared/sweep/runnable.hpp"
#include "shared/sweep/sweep.hpp"
#include "store/store.hpp"

namespace ts::coordinator {

namespace asio = boost::asio;

// The current sweeps, for status and the metrics: every active one and the
// last this many finished.
inline constexpr int64_t finished_sweeps_shown = 10;

struct Submission {
  std::string sweep_id, name;
  std::size_t jobs = 0, configurations = 0;
  std::vector<std::string> warnings;  // e.g. a runner no agent has reported yet
};

// What a submission is checked against: every agent's capabilities as the
// store has them (and `run`'s own agent's), and the model lists they name.
struct SubmissionContext {
  std::vector<nlohmann::json> capabilities;
  sweep::ModelLists lists;
  bool complete = false;  // `capabilities` are every agent that will run it (sweep::check_runnable)
};

// A sweep expanded, each job validated, checked against the context and
// laid out for the store: what needs neither the store nor the registry.
struct PreparedSubmission {
  sweep::Sweep sweep;
  store::SweepRecord record;
  std::vector<store::JobRecord> jobs;
  std::vector<std::string> warnings;  // e.g. a runner no agent has reported yet
};

// Throws ts::InvalidInput naming `origin` and the field of a bad sweep, or
// a model no runner runs. Thread-safe: the coordinator's pool runs it.
PreparedSubmission prepare_submission(const nlohmann::json& spec, const std::string& origin,
                                      const std::string& submitter, const SubmissionContext& context);

// A client's answer to its submission.
nlohmann::json submitted_message(const Submission& submitted);

// Jobs a client's submission stores and queues, or its cancel takes, in one
// turn of the loop (turns.hpp).
inline constexpr std::size_t jobs_per_turn = 500;

class Requests {
 public:
  Requests(store::Store& store, WriteBatch& batch, JobRegistry& registry, const ConnectedAgents& agents,
           const JoiningPeers& joining)
      : store_(store), batch_(batch), registry_(registry), agents_(agents), joining_(joining) {}

  // Validates, expands and stores a sweep, then queues its jobs. Throws
  // ts::InvalidInput naming `origin` and the field of a bad sweep, or a
  // model no runner runs as the agents that ever registered reported; with
  // `only_agent` (a local run's own agent, about to connect), as that agent
  // reported alone: a runner or environment it lacks is refused, since
  // the store's earlier agents will not run it.
  Submission submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter,
                    const std::optional<nlohmann::json>& only_agent = std::nullopt);
  // The same for a client's submission, sparing the loop (docs/operations.md):
  // expanded and validated on `pool`, then stored and queued a chunk a turn
  // in one transaction of the write batch, committed whole.
  asio::awaitable<Submission> submit_in_turns(const nlohmann::json& spec, const std::string& origin,
                                              const std::string& submitter, asio::thread_pool& pool, Turns& turns);
  // Cancels a sweep (id or name) or a job (id); returns how many jobs stopped.
  std::size_t cancel(const std::string& sweep, const std::string& job,
                     store::Store::CancelScope scope = store::Store::CancelScope::unfinished);
  // The same for a client, in the loop's turns (the unfinished jobs).
  asio::awaitable<std::size_t> cancel_in_turns(const std::string& sweep, const std::string& job, Turns& turns);
  // Adds `runs` confirmation runs of each configuration (jobs.config_key)
  // of a sweep (id or name): copies of each one's newest job. Returns the
  // sweep id and the new job ids; an unknown sweep or configuration changes nothing.
  std::pair<std::string, std::vector<std::string>> rerun(const std::string& sweep,
                                                         const std::vector<std::string>& configurations, int64_t runs);
  // The sweep asked for (or the current ones), and unless `with_agents` is
  // false, the connected agents and the connections still joining.
  nlohmann::json status_reply(const std::string& sweep = "", bool with_agents = true);
  // The reply to a client's message of `type`; throws ts::InvalidInput for
  // a bad request or a type clients may not send. A submission or a cancel,
  // which may touch tens of thousands of jobs, spares the loop: its work on
  // `pool` and in the loop's `turns`, one transaction.
  asio::awaitable<nlohmann::json> answer(const std::string& type, const nlohmann::json& request,
                                         asio::thread_pool& pool, Turns& turns);

 private:
  // The id of a sweep given by id or name; throws ts::InvalidInput naming it.
  std::string sweep_id_of(const std::string& id_or_name);
  // The sweep id a cancel names (empty for one job's); throws ts::InvalidInput for an unknown sweep or job.
  std::string cancelled_sweep_id(const std::string& sweep, const std::string& job);
  nlohmann::json answer_at_once(const std::string& type, const nlohmann::json& request);
  SubmissionContext submission_context();
  // The steps of a submission on the loop: its sweep's row (the settings its
  // jobs are placed by), its jobs from `begin` to `end`, and its end (the
  // log line, a dispatch, the answer).
  SweepSettings store_sweep(const PreparedSubmission& prepared);
  void queue_jobs(const PreparedSubmission& prepared, std::size_t begin, std::size_t end,
                  const SweepSettings& settings);
  Submission submitted(const PreparedSubmission& prepared);

  store::Store& store_;
  WriteBatch& batch_;
  JobRegistry& registry_;
  const ConnectedAgents& agents_;
  const JoiningPeers& joining_;
};

}  // namespace ts::coordinator
