#pragma once
// The central results store: sweeps, jobs, agents and results in one SQLite
// file (docs/store.md). One Store is the single writer of a coordinator;
// readers open their own connections (WAL lets them read while it writes).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "coordinator/store/sqlite.hpp"

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
};

class Store {
 public:
  // Opens or creates the store at `path` and migrates it (":memory:" works).
  explicit Store(const std::string& path);

  // A sweep and all its jobs, in one transaction.
  void add_sweep(const SweepRecord& sweep, const std::vector<JobRecord>& jobs);

  // Validates `result` against schemas/result.schema.json and stores it with
  // its epoch and step times. Returns false (and changes nothing) when a
  // result for its (job_id, attempt) is already stored. Throws
  // ts::InvalidInput naming the field of an invalid document.
  bool ingest_result(const nlohmann::json& result, const std::string& agent);
  // The same for many results in one transaction; returns how many were new.
  std::size_t ingest_results(const std::vector<nlohmann::json>& results, const std::string& agent);

  Database& database() { return database_; }

 private:
  bool insert_result(const nlohmann::json& result, const std::string& agent);

  std::string path_;
  Database database_;
  Statement insert_result_, insert_epoch_, insert_step_;
};

}  // namespace ts::store
