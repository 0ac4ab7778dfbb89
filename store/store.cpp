#include "store/store.hpp"

#include <type_traits>
#include <variant>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/timestamp.hpp"
#include "store/migrations.hpp"
#include "store/result_columns.hpp"

namespace ts::store {
namespace {

Database open_migrated(const std::string& path) {
  Database database(path);
  migrate(database, path);
  return database;
}

// The INSERT of a result's row: every column of the column table, each
// bound by its name. A result's sweep is its job's where the store has the
// job, the one its document names otherwise.
std::string insert_result_sql() {
  std::string columns, values;
  for (const auto& column : result_columns().columns) {
    columns += (columns.empty() ? "" : ", ") + column.name;
    values += values.empty() ? "" : ", ";
    values += column.name == "sweep_id" ? "COALESCE((SELECT sweep_id FROM jobs WHERE job_id = :job_id), :sweep_id)"
                                        : ":" + column.name;
  }
  return "INSERT OR IGNORE INTO results (" + columns + ") VALUES (" + values + ")";
}

// The index of each column's parameter in the INSERT, in the table's order.
std::vector<int> parameters_of(const Statement& insert) {
  std::vector<int> indices;
  for (const auto& column : result_columns().columns) indices.push_back(insert.parameter(":" + column.name));
  return indices;
}

}  // namespace

Store::Store(const std::string& path)
    : path_(path),
      database_(open_migrated(path)),
      insert_result_(database_.prepare(insert_result_sql())),
      result_parameters_(parameters_of(insert_result_)),
      insert_document_(database_.prepare("INSERT INTO result_documents (job_id, attempt, document) VALUES (?, ?, ?)")),
      insert_epoch_(database_.prepare(
          "INSERT INTO result_epochs (job_id, attempt, epoch, seconds, step_seconds) VALUES (?, ?, ?, ?, ?)")),
      insert_artifact_(database_.prepare(
          "INSERT INTO artifacts (job_id, attempt, kind, sha256, bytes) VALUES (?, ?, 'trace', ?, ?)")),
      job_started_(database_.prepare(
          "UPDATE jobs SET state = 'running', attempts = ?2, agent = ?3, started_at = ?4 WHERE job_id = ?1")),
      job_requeued_(
          database_.prepare("UPDATE jobs SET state = 'queued', last_error = ?2, attempts = ?3 WHERE job_id = ?1")),
      job_finished_(database_.prepare(
          "UPDATE jobs SET state = ?2, last_error = NULLIF(?3, ''), finished_at = ?4 WHERE job_id = ?1")),
      close_sweep_(database_.prepare(
          "UPDATE sweeps SET state = 'done', finished_at = ?2 WHERE state = 'active' AND sweep_id = "
          "(SELECT sweep_id FROM jobs WHERE job_id = ?1) AND NOT EXISTS (SELECT 1 FROM jobs WHERE sweep_id = "
          "sweeps.sweep_id AND state IN ('queued', 'running'))")),
      has_result_(database_.prepare("SELECT 1 FROM results WHERE job_id = ? AND attempt = ?")) {}

void Store::add_sweep(const SweepRecord& sweep, const std::vector<JobRecord>& jobs) {
  Transaction transaction(database_);
  insert_sweep(sweep);
  insert_jobs(sweep.sweep_id, jobs, sweep.created_at);
  transaction.commit();
}

int64_t Store::insert_sweep(const SweepRecord& sweep) {
  database_.prepare("INSERT INTO sweeps (sweep_id, name, spec, submitter, priority, created_at) VALUES (?,?,?,?,?,?)")
      .bind_all(sweep.sweep_id, sweep.name, sweep.spec.dump(), sweep.submitter, sweep.priority, sweep.created_at)
      .run();
  const auto sequence = database_.last_insert_rowid();
  auto tag = database_.prepare("INSERT OR IGNORE INTO sweep_tags (sweep_id, tag) VALUES (?, ?)");
  for (const auto& name : sweep.tags) tag.bind_all(sweep.sweep_id, name).run();
  return sequence;
}

bool Store::ingest_result(const nlohmann::json& result, const std::string& agent) {
  return ingest_result(prepare_result(result), agent);
}

bool Store::ingest_result(const PreparedResult& result, const std::string& agent) {
  Transaction transaction(database_);
  const bool stored = insert_result(result, agent);
  transaction.commit();
  return stored;
}

std::size_t Store::ingest_results(const std::vector<nlohmann::json>& results, const std::string& agent) {
  std::vector<PreparedResult> prepared;
  prepared.reserve(results.size());
  for (const auto& result : results) prepared.push_back(prepare_result(result));
  return ingest_results(prepared, agent);
}

std::size_t Store::ingest_results(const std::vector<PreparedResult>& results, const std::string& agent) {
  Transaction transaction(database_);
  std::size_t stored = 0;
  for (const auto& result : results) stored += insert_result(result, agent) ? 1 : 0;
  transaction.commit();
  return stored;
}

void Store::insert_jobs(const std::string& sweep_id, std::span<const JobRecord> jobs, const std::string& created_at) {
  auto insert = database_.prepare(
      "INSERT INTO jobs (job_id, sweep_id, ordinal, config_key, repeat, runner, gpus, document, max_attempts, "
      "created_at, purpose, pair_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,NULLIF(?,''))");
  for (const auto& j : jobs) {
    insert
        .bind_all(j.job_id, sweep_id, j.ordinal, j.config_key, j.repeat, j.runner, j.gpus, j.document.dump(),
                  j.max_attempts, created_at, j.purpose, j.pair_key)
        .run();
  }
}

bool Store::insert_result(const PreparedResult& result, const std::string& agent) {
  const auto& columns = result_columns().columns;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const int parameter = result_parameters_[c];
    if (columns[c].name == "agent") {
      insert_result_.bind(parameter, agent);
    } else if (columns[c].name == "received_at") {
      insert_result_.bind(parameter, utc_timestamp());
    } else {
      std::visit(
          [&](const auto& value) {
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::monostate>) {
              insert_result_.bind(parameter, nullptr);
            } else {
              insert_result_.bind(parameter, value);
            }
          },
          result.values.at(c));
    }
  }
  insert_result_.run();
  if (insert_result_.changes() == 0) return false;  // (job_id, attempt) already stored
  insert_document_.bind_all(result.job_id, result.attempt, result.document).run();
  if (result.trace)
    insert_artifact_.bind_all(result.job_id, result.attempt, result.trace->sha256, result.trace->bytes).run();
  for (const auto& epoch : result.epochs) {
    insert_epoch_.bind_all(result.job_id, result.attempt, epoch.epoch, epoch.seconds, epoch.step_seconds).run();
  }
  return true;
}

void Store::job_started(const std::string& job_id, int64_t attempt, const std::string& agent) {
  job_started_.bind_all(job_id, attempt, agent, utc_timestamp()).run();
}

void Store::job_requeued(const std::string& job_id, const std::string& reason, int64_t attempts) {
  job_requeued_.bind_all(job_id, reason, attempts).run();
}

bool Store::has_result(const std::string& job_id, int64_t attempt) {
  has_result_.bind_all(job_id, attempt);
  const bool found = has_result_.step();
  has_result_.reset();
  return found;
}

void Store::job_finished(const std::string& job_id, const std::string& state, const std::string& error) {
  Transaction transaction(database_);
  const auto now = utc_timestamp();
  job_finished_.bind_all(job_id, state, error, now).run();
  close_sweep_.bind_all(job_id, now).run();
  transaction.commit();
}

std::vector<std::pair<std::string, std::string>> Store::cancellable(const std::string& sweep_id,
                                                                    const std::string& job_id, CancelScope scope) {
  std::vector<std::pair<std::string, std::string>> jobs;
  auto select = database_.prepare(
      "SELECT job_id, state FROM jobs WHERE (state = 'queued' OR (state = 'running' AND ?3)) AND "
      "(sweep_id = ?1 OR job_id = ?2) ORDER BY ordinal");
  select.bind_all(sweep_id, job_id, int64_t{scope == CancelScope::unfinished});
  while (select.step()) jobs.emplace_back(select.text(0), select.text(1));
  return jobs;
}

void Store::mark_cancelled(std::span<const std::pair<std::string, std::string>> jobs, const std::string& now) {
  for (const auto& [id, state] : jobs) job_finished_.bind_all(id, "cancelled", "cancelled", now).run();
}

void Store::close_cancelled(const std::string& sweep_id, const std::string& job_id, const std::string& now) {
  if (job_id.empty()) {
    database_
        .prepare("UPDATE sweeps SET state = 'cancelled', finished_at = ?2 WHERE sweep_id = ?1 AND state = 'active'")
        .bind_all(sweep_id, now)
        .run();
  } else {
    close_sweep_.bind_all(job_id, now).run();
  }
}

std::optional<std::string> find_sweep(Database& database, const std::string& id_or_name) {
  auto select = database.prepare(
      "SELECT sweep_id FROM sweeps WHERE sweep_id = ?1 OR name = ?1 ORDER BY sweep_id = ?1 DESC, rowid DESC LIMIT 1");
  select.bind_all(id_or_name);
  if (!select.step()) return std::nullopt;
  return select.text(0);
}

std::vector<SweepSummary> Store::sweeps(const std::string& sweep_id, int64_t recent_finished) {
  std::vector<SweepSummary> summaries;
  // LIMIT -1 is no limit in SQLite.
  auto select = database_.prepare(
      "SELECT sweep_id, name, state, created_at, priority, rowid, spec FROM sweeps "
      "WHERE (?1 != '' AND sweep_id = ?1) OR (?1 = '' AND (state = 'active' OR rowid IN "
      "(SELECT rowid FROM sweeps WHERE state != 'active' ORDER BY rowid DESC LIMIT ?2))) ORDER BY rowid");
  select.bind_all(sweep_id, recent_finished);
  auto counts = database_.prepare("SELECT state, COUNT(*) FROM jobs WHERE sweep_id = ? GROUP BY state");
  auto cost = database_.prepare("SELECT SUM(run_cost) FROM results WHERE sweep_id = ?");
  while (select.step()) {
    SweepSummary summary{select.text(0),
                         select.text(1),
                         select.text(2),
                         select.text(3),
                         select.integer(4),
                         select.integer(5),
                         0,
                         {},
                         nlohmann::json::parse(select.text(6))};
    counts.bind_all(summary.sweep_id);
    while (counts.step()) {
      summary.jobs[counts.text(0)] = counts.integer(1);
      summary.total += counts.integer(1);
    }
    counts.reset();
    cost.bind_all(summary.sweep_id);
    if (cost.step()) summary.cost = cost.optional_real(0);
    cost.reset();
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

namespace {

constexpr const char* job_columns =
    "j.job_id, j.sweep_id, j.config_key, j.runner, j.state, COALESCE(j.agent, ''), j.ordinal, j.repeat, j.gpus, "
    "j.attempts, j.max_attempts, j.document";

StoredJob read_job(Statement& row) {
  return StoredJob{row.text(0),    row.text(1),    row.text(2),     row.text(3),
                   row.text(4),    row.text(5),    row.integer(6),  row.integer(7),
                   row.integer(8), row.integer(9), row.integer(10), nlohmann::json::parse(row.text(11))};
}

}  // namespace

std::vector<StoredJob> Store::unfinished_jobs() {
  std::vector<StoredJob> jobs;
  auto select = database_.prepare(std::string("SELECT ") + job_columns +
                                  " FROM jobs j JOIN sweeps s ON s.sweep_id = j.sweep_id "
                                  "WHERE s.state = 'active' AND j.state IN ('queued', 'running') "
                                  "ORDER BY s.rowid, j.ordinal");
  while (select.step()) jobs.push_back(read_job(select));
  return jobs;
}

std::optional<StoredJob> Store::job(const std::string& job_id) {
  auto select = database_.prepare(std::string("SELECT ") + job_columns + " FROM jobs j WHERE j.job_id = ?");
  select.bind_all(job_id);
  if (!select.step()) return std::nullopt;
  return read_job(select);
}

std::vector<StoredJob> Store::sweep_jobs(const std::string& sweep_id) {
  std::vector<StoredJob> jobs;
  auto select =
      database_.prepare(std::string("SELECT ") + job_columns + " FROM jobs j WHERE j.sweep_id = ? ORDER BY j.ordinal");
  select.bind_all(sweep_id);
  while (select.step()) jobs.push_back(read_job(select));
  return jobs;
}

std::vector<double> Store::epoch_times(const std::string& sweep_id, const std::string& config_key) {
  auto select = database_.prepare(
      "SELECT r.median_epoch_s FROM results r JOIN jobs j ON j.job_id = r.job_id "
      "WHERE j.sweep_id = ? AND j.config_key = ? AND r.status = 'ok' AND r.median_epoch_s IS NOT NULL "
      "ORDER BY j.ordinal, r.attempt");
  select.bind_all(sweep_id, config_key);
  std::vector<double> times;
  while (select.step()) times.push_back(select.real(0));
  return times;
}

void Store::add_jobs(const std::string& sweep_id, const std::vector<JobRecord>& jobs) {
  Transaction transaction(database_);
  insert_jobs(sweep_id, jobs, utc_timestamp());
  database_.prepare("UPDATE sweeps SET state = 'active', finished_at = NULL WHERE sweep_id = ? AND state = 'done'")
      .bind_all(sweep_id)
      .run();
  transaction.commit();
}

void Store::record_adaptive_pair(const std::string& sweep_id, const std::string& pair_key, int64_t rounds,
                                 std::optional<double> half_width, std::optional<double> power,
                                 const std::string& state) {
  database_
      .prepare(
          "INSERT INTO adaptive_pairs (sweep_id, pair_key, rounds, half_width, power, state) VALUES (?1, ?2, ?3, ?4, "
          "?5, ?6) ON CONFLICT (sweep_id, pair_key) DO UPDATE SET rounds = ?3, half_width = ?4, power = ?5, state = ?6")
      .bind_all(sweep_id, pair_key, rounds, half_width, power, state)
      .run();
}

void Store::record_regressions(const std::vector<nlohmann::json>& regressions) {
  Transaction transaction(database_);
  auto insert = database_.prepare(
      "INSERT OR REPLACE INTO regressions (regression_id, recorded_at, sweep_id, baseline_sweep_id, configuration, "
      "job, metric, change, p_value, threshold, classification, torch_versions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
      "?8, ?9, ?10, ?11, ?12)");
  const auto text = [](const nlohmann::json& value) {
    return value.is_null() ? std::optional<std::string>() : std::optional<std::string>(value.dump());
  };
  const auto real = [](const nlohmann::json& value) {
    return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
  };
  for (const auto& r : regressions) {
    insert
        .bind_all(r.at("regression_id").get<std::string>(), utc_timestamp(), r.at("sweep_id").get<std::string>(),
                  r.at("baseline_sweep_id").get<std::string>(), r.at("configuration").dump(), text(r.at("job")),
                  r.at("metric").get<std::string>(), real(r.at("change")), real(r.at("p_value")),
                  real(r.at("threshold")), r.at("classification").get<std::string>(), r.at("torch_versions").dump())
        .run();
  }
  transaction.commit();
}

void Store::record_calibration(const std::string& sweep_id, int64_t rounds, int64_t night_runs, double alpha,
                               const std::vector<nlohmann::json>& configurations) {
  Transaction transaction(database_);
  database_.prepare("DELETE FROM calibration_noise WHERE sweep_id = ?").bind_all(sweep_id).run();
  database_
      .prepare(
          "INSERT OR REPLACE INTO calibrations (sweep_id, recorded_at, rounds, night_runs, alpha, hosts, environments) "
          "VALUES (?1, ?2, ?5, ?3, ?4, (SELECT json_group_array(host) FROM (SELECT DISTINCT host FROM results WHERE "
          "sweep_id = ?1 "
          "ORDER BY host)), (SELECT json_group_array(environment) FROM (SELECT DISTINCT COALESCE(env, 'own') || "
          "' / torch ' || COALESCE(torch_version, '?') AS environment FROM results WHERE sweep_id = ?1 ORDER BY 1)))")
      .bind_all(sweep_id, utc_timestamp(), night_runs, alpha, rounds)
      .run();
  static constexpr const char* figures[] = {"nodes",        "processes",         "epochs",           "median_epoch_s",
                                            "within_cv",    "process_cv",        "node_cv",          "run_cv",
                                            "aa_pairs",     "false_alarms",      "false_alarm_rate", "nominal_rate",
                                            "confirm_rate", "change_point_rate", "threshold_needed", "power_10pct",
                                            "note"};
  std::string columns = "sweep_id, configuration", values = "?1, json(json_extract(?2, '$.configuration'))";
  for (const char* figure : figures) {
    columns += std::string(", ") + figure;
    values += std::string(", json_extract(?2, '$.") + figure + "')";
  }
  auto insert = database_.prepare("INSERT INTO calibration_noise (" + columns + ") VALUES (" + values + ")");
  for (const auto& configuration : configurations) insert.bind_all(sweep_id, configuration.dump()).run();
  transaction.commit();
}

nlohmann::json Store::adaptive_pairs(const std::string& sweep_id) {
  auto select = database_.prepare(
      "SELECT pair_key, rounds, half_width, state, power FROM adaptive_pairs WHERE sweep_id = ? ORDER BY pair_key");
  select.bind_all(sweep_id);
  nlohmann::json pairs = nlohmann::json::array();
  const auto real_or_null = [&](int column) {
    return select.is_null(column) ? nlohmann::json(nullptr) : nlohmann::json(select.real(column));
  };
  while (select.step()) {
    pairs.push_back({{"pair", nlohmann::json::parse(select.text(0))},
                     {"rounds", select.integer(1)},
                     {"half_width", real_or_null(2)},
                     {"power", real_or_null(4)},
                     {"state", select.text(3)}});
  }
  return pairs;
}

void Store::record_agent(const std::string& name, const nlohmann::json& capabilities, const nlohmann::json& labels) {
  const auto now = utc_timestamp();
  database_
      .prepare(
          "INSERT INTO agents (name, hostname, capabilities, labels, first_seen, last_seen) VALUES (?1,?2,?3,?4,?5,?5) "
          "ON CONFLICT (name) DO UPDATE SET hostname = ?2, capabilities = ?3, labels = ?4, last_seen = ?5")
      .bind_all(name, capabilities.value("hostname", ""), capabilities.dump(), labels.dump(), now)
      .run();
}

std::vector<nlohmann::json> Store::agent_capabilities() { return store::agent_capabilities(database_); }

bool Store::has_model_list(const std::string& digest) {
  if (!model_list_digests_) {
    model_list_digests_.emplace();
    auto select = database_.prepare("SELECT digest FROM model_lists");
    while (select.step()) model_list_digests_->insert(select.text(0));
  }
  return model_list_digests_->contains(digest);
}

void Store::record_model_list(const std::string& digest, const nlohmann::json& names) {
  if (has_model_list(digest)) return;
  database_.prepare("INSERT OR IGNORE INTO model_lists (digest, names) VALUES (?, ?)")
      .bind_all(digest, names.dump())
      .run();
  model_list_digests_->insert(digest);
}

std::map<std::string, std::vector<std::string>> model_lists(Database& database) {
  auto select = database.prepare("SELECT digest, names FROM model_lists");
  std::map<std::string, std::vector<std::string>> lists;
  while (select.step()) lists[select.text(0)] = nlohmann::json::parse(select.text(1)).get<std::vector<std::string>>();
  return lists;
}

std::vector<nlohmann::json> agent_capabilities(Database& database) {
  auto select = database.prepare("SELECT capabilities FROM agents");
  std::vector<nlohmann::json> all;
  while (select.step()) all.push_back(nlohmann::json::parse(select.text(0)));
  return all;
}

}  // namespace ts::store
