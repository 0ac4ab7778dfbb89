#pragma once
// Sweep files (schemas/sweep.schema.json): loading YAML or JSON, validating,
// and expanding the matrix into job documents in run order.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::sweep {

struct PlannedJob {
  int64_t ordinal = 0;      // position in run order
  int64_t repeat = 0;       // 0-based repeat of its configuration
  std::string config_key;   // the configuration as canonical JSON, without the repeat
  nlohmann::json document;  // a job document (schemas/job.schema.json) without job_id and attempt
};

struct Sweep {
  std::string name;
  std::vector<std::string> tags;
  nlohmann::json spec;  // the document as loaded
  int64_t repeats = 1;  // expanded now: an adaptive sweep's `min`
  int64_t priority = 0;
  int64_t max_attempts = 3;
  bool node_exclusive = true;
  std::string placement = "spread";
  nlohmann::json requirements = nlohmann::json::object();
  std::vector<PlannedJob> jobs;
  std::size_t configurations = 0;
};

// Parses YAML (JSON is YAML too) into JSON; plain scalars become numbers,
// booleans or null where they read as such. Throws ts::InvalidInput with the
// file and line of a syntax error.
nlohmann::json read_document(const std::string& path);
nlohmann::json parse_yaml(const std::string& text, const std::string& origin);

// Validates `spec` and expands it. Errors name `origin`, the path inside the
// document (e.g. axes.batch_size[2]) and what was expected.
Sweep expand(const nlohmann::json& spec, const std::string& origin);

inline Sweep load(const std::string& path) { return expand(read_document(path), path); }

}  // namespace ts::sweep
