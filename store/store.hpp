#pragma once
// The central results store: sweeps, jobs, agents and results in one SQLite
// file (docs/store.md). One Store is the single writer of a coordinator;
// readers open their own connections (WAL lets them read while it writes).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "store/prepared_result.hpp"
#include "store/sqlite.hpp"

namespace ts::store {

struct SweepRecord {
  std::string sweep_id, name;
  nlohmann::json spec;
  std::vector<std::string> tags;
  std::string submitter;
  int64_t priority = 0;
  std::string created_at;
};

struct JobRecord {
  std::string job_id;
  int64_t ordinal = 0;
  std::string config_key;
  int64_t repeat = 0;
  std::string runner = "libtorch";
  int64_t gpus = 1;
  nlohmann::json document;
  int64_t max_attempts = 3;
  std::string purpose = "measurement";  // or "confirmation" (jobs.purpose)
  // A paired sweep's (pairing.by): the configuration key less that axis (sweep::pair_key); empty when unpaired.
  std::string pair_key{};
};

// A job as the store keeps it (table jobs).
struct StoredJob {
  std::string job_id, sweep_id, config_key, runner, state;
  std::string agent;  // of the current or last attempt; empty before the first
  int64_t ordinal = 0, repeat = 0, gpus = 1, attempts = 0, max_attempts = 3;
  nlohmann::json document;
};

// A sweep with its jobs counted per state.
struct SweepSummary {
  std::string sweep_id, name, state, created_at;
  int64_t priority = 0, sequence = 0, total = 0;
  std::map<std::string, int64_t> jobs;  // state -> count
  nlohmann::json spec;
  std::optional<double> cost{};  // its priced results' run costs together; none when none was priced
};

// The id of a sweep given by id, or by name (the newest of that name), in
// any store connection.
std::optional<std::string> find_sweep(Database& database, const std::string& id_or_name);

class Store {
 public:
  // Opens or creates the store at `path` and migrates it (":memory:" works).
  explicit Store(const std::string& path);
  const std::string& path() const { return path_; }

  // A sweep and all its jobs, in one transaction.
  void add_sweep(const SweepRecord& sweep, const std::vector<JobRecord>& jobs);
  // The same in parts, for a caller that holds the write transaction across
  // them (the coordinator's write batch): the sweep's row and tags, returning
  // its sequence (rowid); then its jobs, a chunk at a time.
  int64_t insert_sweep(const SweepRecord& sweep);
  void insert_jobs(const std::string& sweep_id, std::span<const JobRecord> jobs, const std::string& created_at);

  // Validates `result` against schemas/result.schema.json and stores it with
  // its epoch and step times: its row from its judged summary
  // (agent/judge/summary.hpp), column by column by name. Returns false (and changes nothing) when a
  // result for its (job_id, attempt) is already stored. Throws
  // ts::InvalidInput naming the field of an invalid document.
  bool ingest_result(const nlohmann::json& result, const std::string& agent);
  // The same for a result prepared already (prepared_result.hpp, on any
  // thread): only the writer's part, binding and stepping.
  bool ingest_result(const PreparedResult& result, const std::string& agent);
  // The same for many results in one transaction; returns how many were new.
  // Nothing is stored when one of them is invalid.
  std::size_t ingest_results(const std::vector<nlohmann::json>& results, const std::string& agent);
  std::size_t ingest_results(const std::vector<PreparedResult>& results, const std::string& agent);

  // Job states, as the coordinator changes them (docs/store.md).
  void job_started(const std::string& job_id, int64_t attempt, const std::string& agent);
  // `attempts`: those used so far (one fewer when the agent refused the last).
  void job_requeued(const std::string& job_id, const std::string& reason, int64_t attempts);
  // state: done, failed or cancelled. A sweep whose jobs have all finished
  // becomes done (or stays cancelled).
  void job_finished(const std::string& job_id, const std::string& state, const std::string& error = "");
  // Which jobs a cancel takes: every unfinished one, or only those that have
  // not started (a time box lets the runs in flight finish).
  enum class CancelScope { unfinished, unstarted };
  // A cancel, in parts, for a caller that holds the write transaction across
  // them: the queued (and, unless `scope` says unstarted, running) jobs of a
  // sweep (or one job), with the state each had; those marked cancelled a
  // chunk at a time (at `now`); then the sweep cancelled (a whole sweep's),
  // or done if that job was its last.
  std::vector<std::pair<std::string, std::string>> cancellable(const std::string& sweep_id, const std::string& job_id,
                                                               CancelScope scope);
  void mark_cancelled(std::span<const std::pair<std::string, std::string>> jobs, const std::string& now);
  void close_cancelled(const std::string& sweep_id, const std::string& job_id, const std::string& now);

  // The id of a sweep given by id, or by name (the newest of that name).
  std::optional<std::string> resolve_sweep(const std::string& id_or_name) { return find_sweep(database_, id_or_name); }
  // Sweeps, oldest first: only `sweep_id` when given; otherwise every active
  // sweep and the `recent_finished` newest finished ones (-1: all of them).
  std::vector<SweepSummary> sweeps(const std::string& sweep_id = "", int64_t recent_finished = -1);
  // Queued and running jobs of active sweeps, in sweep then ordinal order.
  std::vector<StoredJob> unfinished_jobs();
  std::optional<StoredJob> job(const std::string& job_id);
  // Every job of a sweep, in ordinal order.
  std::vector<StoredJob> sweep_jobs(const std::string& sweep_id);
  // The median epoch times of the stored ok results of a sweep's jobs of one configuration.
  std::vector<double> epoch_times(const std::string& sweep_id, const std::string& config_key);
  // More jobs for a sweep (adaptive repeats); the sweep is active again.
  void add_jobs(const std::string& sweep_id, const std::vector<JobRecord>& jobs);
  // Where a compared pair of an adaptive sweep stands (table adaptive_pairs).
  void record_adaptive_pair(const std::string& sweep_id, const std::string& pair_key, int64_t rounds,
                            std::optional<double> half_width, std::optional<double> power, const std::string& state);
  // An A/A calibration (docs/noise.md): the sweep, its runs a night and
  // alpha, and per configuration an object with `configuration` (the axes'
  // values) and the noise table's figures (columns of calibration_noise);
  // the hosts, environments and rounds are read from the sweep's results.
  // Replaces an earlier record of the same sweep.
  // The regressions a nightly found (readers/regression_records.hpp's records), each replacing a row of its id.
  void record_regressions(const std::vector<nlohmann::json>& regressions);
  void record_calibration(const std::string& sweep_id, int64_t rounds, int64_t night_runs, double alpha,
                          const std::vector<nlohmann::json>& configurations);
  // A sweep's adaptive pairs: pair, rounds, half_width, power, state.
  nlohmann::json adaptive_pairs(const std::string& sweep_id);
  bool has_result(const std::string& job_id, int64_t attempt);
  void record_agent(const std::string& name, const nlohmann::json& capabilities, const nlohmann::json& labels);
  // The capabilities every agent ever seen reported last (model lists by
  // digest where the agent sent them so: model_lists below).
  std::vector<nlohmann::json> agent_capabilities();
  // Agents' model lists, each kept once by its digest (shared/model_lists.hpp).
  bool has_model_list(const std::string& digest);
  // Keeps `names` as `digest` (the caller checked it) unless it is kept already.
  void record_model_list(const std::string& digest, const nlohmann::json& names);

  Database& database() { return database_; }

 private:
  bool insert_result(const PreparedResult& result, const std::string& agent);

  std::string path_;
  Database database_;
  Statement insert_result_;
  std::vector<int> result_parameters_;  // per column of store::result_columns(), its parameter in insert_result_
  Statement insert_document_, insert_epoch_, insert_artifact_;
  Statement job_started_, job_requeued_, job_finished_, close_sweep_, has_result_;
  std::optional<std::set<std::string>> model_list_digests_;  // read at first use; this writer adds to it
};

// The capabilities every agent ever seen reported last, from any connection
// to the store (the coordinator's, a reader's read-only one).
std::vector<nlohmann::json> agent_capabilities(Database& database);
// The model lists agents sent, by digest (shared/model_lists.hpp).
std::map<std::string, std::vector<std::string>> model_lists(Database& database);

}  // namespace ts::store
