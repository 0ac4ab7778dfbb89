#pragma once
// Sweep files (schemas/sweep.schema.json): loading YAML or JSON, validating,
// and parsing them once into one typed value (its defaults are the schema's
// "default"s, spelled nowhere else), with the matrix expanded into job
// documents in run order. The CLI, the coordinator's submit and its resume
// after a restart all read a sweep through parse() or expand().
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shared/regression_rule.hpp"

namespace ts::sweep {

struct PlannedJob {
  int64_t ordinal = 0;      // position in run order
  int64_t repeat = 0;       // 0-based repeat of its configuration
  std::string config_key;   // the configuration as canonical JSON, without the repeat
  nlohmann::json document;  // a job document (schemas/job.schema.json) without job_id and attempt
};

// Where a sweep's jobs may run (`requirements`).
struct Requirements {
  std::string gpu_type;  // a substring of the GPU name; empty: any
  double min_gpu_memory_gb{};
  std::map<std::string, std::string> labels;
};

// Adaptive repeats (`repeats: {min, max, until}`, docs/sweeps.md): rounds of
// each compared pair until its speedup's interval is narrow enough.
struct AdaptiveRepeats {
  int64_t min{}, max{};
  std::string compare;                 // the axis whose two values are compared
  std::vector<nlohmann::json> values;  // that axis's values, in the sweep's order: the first is the reference
  // Until the speedup's interval is this narrow (relative to the estimate),
  // or until the regression rule `judge` has `power` to call a `slowdown`
  // regressed at the pair's measured run spread: one of the two.
  std::optional<double> ci_half_width, power;
  double slowdown{};
  RegressionRule judge;
  // With power: also until `judge` decides the pair (the other side slower, or its ratio's interval below 1 +
  // threshold: judge_slowdown), else on to max.
  bool decided{};
};

// Every member is set by parse(); none carries a default of its own.
struct Sweep {
  std::string name;
  std::vector<std::string> tags;
  nlohmann::json spec;                      // the document as loaded (expand: its suites resolved)
  int64_t repeats{};                        // expanded now: an adaptive sweep's `min`
  std::optional<AdaptiveRepeats> adaptive;  // none: `repeats` is a plain count
  int64_t priority{};
  int64_t max_attempts{};
  bool node_exclusive{};
  bool pinned{};  // placement: pinned (else spread)
  Requirements requirements;
  bool interleaved{};     // order: interleaved (else grouped)
  std::string pair_axis;  // pairing.by: the axis whose values run as a pair on one agent; empty: no pairing
  // calibration.nodes: the distinct agents a configuration's rounds are
  // spread over (0: not a calibration; its rounds are `repeats`).
  int64_t calibration_nodes{};
  uint64_t seed{};
  std::vector<PlannedJob> jobs;  // expand() only
  std::size_t configurations{};  // expand() only
};

// Parses YAML (JSON is YAML too) into JSON; plain scalars become numbers,
// booleans or null where they read as such. Throws ts::InvalidInput with the
// file and line of a syntax error.
nlohmann::json read_document(const std::string& path);
nlohmann::json parse_yaml(const std::string& text, const std::string& origin);

// Validates `spec` and reads its settings (everything but the jobs). Errors
// name `origin`, the path inside the document (e.g. repeats.max) and what was
// expected.
Sweep parse(const nlohmann::json& spec, const std::string& origin);
// parse() of the document with its suites resolved (shared/sweep/suites.hpp),
// then every job: errors name the axis values too (axes.batch_size[2]).
Sweep expand(const nlohmann::json& spec, const std::string& origin);

inline Sweep load(const std::string& path) { return expand(read_document(path), path); }

// The pair (or group) a configuration belongs to: its config key without
// `axis` (adaptive repeats' compared axis, pairing's `by`).
std::string pair_key(const std::string& config_key, const std::string& axis);
// What the store keeps as a job's jobs.pair_key: pair_key under the sweep's
// `pair_axis` (pairing.by), or empty where the sweep pairs nothing.
std::string stored_pair_key(const std::string& config_key, const std::string& pair_axis);

}  // namespace ts::sweep
