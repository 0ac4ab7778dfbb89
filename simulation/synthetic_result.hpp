#pragma once
// Result documents that validate against schemas/result.schema.json, with
// chosen figures, raw as a runner writes them or judged as an agent
// delivers them: for store tests and the store benchmark.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/judge/summary.hpp"

namespace ts::simulation {

struct SyntheticResult {
  std::string job_id = "job-1";
  int64_t attempt = 1;
  std::string sweep = "sweep-1";
  std::string model = "resnet50";
  std::string mode = "eager";
  std::string precision = "fp32";
  int64_t batch_size = 64;
  int64_t gpus = 1;
  std::string host = "node-a";
  std::vector<double> epoch_seconds{1.0, 1.1, 0.9};
  int64_t iters = 10;
  int64_t peak_bytes = 1 << 30;
};

inline nlohmann::json make_result(const SyntheticResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (double epoch : r.epoch_seconds)
    steps.push_back(std::vector<double>(static_cast<std::size_t>(r.iters), epoch / static_cast<double>(r.iters)));
  std::vector<double> sorted = r.epoch_seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  return {
      {"schema_version", 1},
      {"status", "ok"},
      {"runner", {{"name", "libtorch"}, {"version", "0.1.0"}}},
      {"job",
       {{"schema_version", 1},
        {"job_id", r.job_id},
        {"attempt", r.attempt},
        {"sweep", r.sweep},
        {"model", r.model},
        {"mode", r.mode},
        {"precision", r.precision},
        {"batch_size", r.batch_size},
        {"task", "train"},
        {"gpus", r.gpus},
        {"device", "cpu"}}},
      {"execution",
       {{"task", "train"},
        {"mode", r.mode},
        {"compiler", r.mode == "compiled" ? "torchscript-nnc" : "none"},
        {"fallback_reason", nullptr},
        {"precision", r.precision},
        {"device", "cpu"}}},
      {"timing",
       {{"clock", "steady_clock"},
        {"warmup_iterations", 10},
        {"warmup_seconds", 2.0},
        {"first_iteration_seconds", 0.5},
        {"epochs", r.epoch_seconds.size()},
        {"iterations_per_epoch", r.iters},
        {"epoch_seconds", r.epoch_seconds},
        {"step_seconds", steps},
        {"median_epoch_seconds", median},
        {"median_step_seconds", median / static_cast<double>(r.iters)},
        {"samples_per_second", static_cast<double>(r.batch_size * r.gpus * r.iters) / median},  // every rank's batch
        {"step_cv", 0.01},
        {"step_iqr_over_median", 0.01},
        {"noisy", false}}},
      {"loss", {{"first_step", 6.9}, {"epoch_final", {6.0}}}},
      {"memory", {{"source", "rss"}, {"peak_rss_bytes", r.peak_bytes}, {"rss_growth_bytes", 0}}},
      {"context",
       {{"hostname", r.host},
        {"cpu_model", "Test CPU"},
        {"cpu_cores_available", 2},
        {"torch_version", "2.6.0"},
        {"intra_op_threads", 2},
        {"interop_threads", 2},
        {"torchsweep_version", "0.1.0"},
        {"torchsweep_commit", "test"},
        {"gpu_count", 0}}},
      {"warnings", nlohmann::json::array()},
      {"started_at", "2026-11-30T00:00:00.000Z"},
      {"finished_at", "2026-11-30T00:00:10.000Z"}};
}

// A result as an agent delivers it: with the judge's summary, which the
// store requires (agent/judge/summary.hpp). After the last change to it.
inline nlohmann::json judged(nlohmann::json result) {
  result["summary"] = agent::summary_of(result);
  return result;
}
inline std::vector<nlohmann::json> all_judged(std::vector<nlohmann::json> results) {
  for (auto& result : results) result = judged(std::move(result));
  return results;
}

// An operator of a synthetic profile: its calls and self seconds a profiled step (on the CPU).
struct SyntheticOperator {
  std::string name;
  double calls = 1, seconds = 0;
};

// A CPU profile section (result.schema.json's profile, docs/explain.md) of `operators`, most time first as a
// runner gives them, with their totals and profiled steps of `step_seconds`.
inline nlohmann::json make_profile(const std::vector<SyntheticOperator>& operators,
                                   const std::vector<double>& step_seconds) {
  auto rows = nlohmann::json::array();
  double total = 0;
  for (const auto& op : operators) {
    rows.push_back({{"name", op.name},
                    {"calls", op.calls},
                    {"self_cpu_s", op.seconds},
                    {"cpu_total_s", op.seconds},
                    {"self_device_s", 0.0},
                    {"device_total_s", 0.0}});
    total += op.seconds;
  }
  return {
      {"status", "ok"},
      {"profiler", "torch.profiler 2.6.0"},
      {"steps", step_seconds.size()},
      {"activities", {"cpu"}},
      {"record_shapes", false},
      {"memory", false},
      {"with_stack", false},
      {"step_seconds", step_seconds},
      {"operators", rows},
      {"kernels", nlohmann::json::array()},
      {"totals",
       {{"operators", rows.size()}, {"self_cpu_s", total}, {"self_device_s", 0.0}, {"kernels", 0}, {"kernel_s", 0.0}}}};
}

}  // namespace ts::simulation
