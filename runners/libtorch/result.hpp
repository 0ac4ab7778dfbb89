#pragma once
// The result document (schemas/result.schema.json): the only place its
// fields are spelled on the worker side.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runners/libtorch/job.hpp"

namespace ts::worker {

enum class Status { ok, failed, unsupported };
NLOHMANN_JSON_SERIALIZE_ENUM(Status,
                             {{Status::ok, "ok"}, {Status::failed, "failed"}, {Status::unsupported, "unsupported"}})

struct FusionReport {
  int64_t fused_kernels = 0;
  int64_t fused_launches_per_step = 0;
  std::vector<std::string> kernel_names;
};

struct LossScalingReport {
  double initial_scale = 0;
  double final_scale = 0;
  int64_t skipped_steps = 0;
};

// One rank of a multi-rank job, as it reports itself to rank 0.
struct RankReport {
  int64_t rank = 0;
  std::string host, device;
  std::vector<std::vector<double>> step_seconds;  // per timed epoch
  double median_step_seconds = 0;
  double all_reduce_seconds = 0;             // all-reduces in flight, summed over the timed steps
  double exposed_communication_seconds = 0;  // waiting for them after backward, summed
  double compute_seconds = 0;                // the timed steps less the exposed communication
  std::optional<int64_t> peak_memory_bytes;
};

// How a multi-rank job trained (docs/multi-gpu.md).
struct DistributedReport {
  std::string backend;  // mpi or nccl
  int64_t ranks = 1, nodes = 1;
  bool overlap = true;
  int64_t bucket_bytes = 0, buckets = 0, gradient_bytes = 0;
  // Rank 0's all-reduces over the timed steps (absent for inference).
  int64_t all_reduces = 0;
  double all_reduce_seconds = 0;
  std::optional<double> algorithm_bandwidth_gbps, bus_bandwidth_gbps;
  double communication_fraction = 0;  // rank 0: exposed communication / timed step time
  bool replicas_identical = false;    // parameter and buffer checksums equal on every rank at the end
  std::vector<RankReport> per_rank;
};

struct ExecutionReport {
  Task task = Task::train;
  Mode mode = Mode::eager;  // what actually ran
  std::string compiler = "none";
  std::optional<std::string> fallback_reason;
  std::optional<double> capture_seconds;
  std::optional<FusionReport> fusion;
  Precision precision = Precision::fp32;
  std::optional<std::string> autocast_dtype;
  std::optional<LossScalingReport> loss_scaling;
  std::string device;
  int64_t model_parameters = 0;
  double initial_parameter_l1 = 0;
  std::optional<std::string> initial_weights, reference_batch;  // the files loaded, if any
  std::optional<DistributedReport> distributed;
  nlohmann::json math;                     // the fp32 math policy in effect (runners/libtorch/math_policy.hpp)
  std::optional<std::string> data_layout;  // NCHW or NHWC for an image model; none otherwise
};

struct TimingReport {
  std::string clock;
  int64_t warmup_iterations = 0;
  double warmup_seconds = 0;
  std::optional<double> first_iteration_seconds;
  int64_t iterations_per_epoch = 0;
  std::vector<double> epoch_seconds;
  std::vector<std::vector<double>> step_seconds;
  // Nothing derived: medians, throughput, spread and the noise and warm-up
  // judgements are the agent's (agent/judge/).
};

nlohmann::json to_json(const RankReport& report);
RankReport rank_report_from_json(const nlohmann::json& document);

// schemas/result.schema.json's memory: the timed phase's figures, and apart
// the warm-up/compile phase's.
struct MemoryReport {
  std::string source;  // "rss" or "cuda_allocator"
  // CPU, timed phase: the resident high-water mark, what the phase added to
  // the resident size it started with, and the mark above the process's
  // baseline before the model was built (the default figure).
  std::optional<int64_t> peak_rss_bytes, rss_growth_bytes, rss_footprint_bytes;
  std::optional<int64_t> baseline_rss_bytes, warmup_peak_rss_bytes;
  std::optional<bool> hwm_reset;  // false: the mark could not be reset and spans the process life
  // CUDA, timed phase and warm-up/compile phase.
  std::optional<int64_t> peak_allocated_bytes, peak_reserved_bytes;
  std::optional<int64_t> warmup_peak_allocated_bytes, warmup_peak_reserved_bytes;
};

struct LossReport {
  std::optional<double> first_step;
  std::optional<double> second_step;     // after one update
  std::optional<double> reference_eval;  // eval mode on the reference batch after its two steps
  std::vector<std::optional<double>> epoch_final;
};

// schemas/result.schema.json's data: imagefolder jobs' input pipeline.
struct DataReport {
  std::string folder, loader;
  int64_t images = 0, classes = 0, workers = 0, prefetch = 0;
  std::vector<std::string> corrupt_files;         // sorted
  std::vector<double> epoch_input_stall_seconds;  // whether they made it input-bound is the agent's judgement
  double loader_images_per_second = 0;
  int64_t loader_pass_images = 0;
};

// schemas/result.schema.json's generation: task generate's raw figures
// (the worker generates eagerly: matches_eager is null, its cache static).
struct GenerationReport {
  int64_t prompt_len = 0, new_tokens = 0;
  std::vector<double> prefill_seconds;  // per timed generation
  int64_t kv_cache_bytes = 0;
  std::vector<int64_t> tokens;  // the first sequence's new tokens, last timed generation
};

struct Result {
  Status status = Status::failed;
  std::optional<std::string> error;
  Job job;
  std::optional<ExecutionReport> execution;
  std::optional<TimingReport> timing;
  std::optional<LossReport> loss;
  std::optional<MemoryReport> memory;
  std::optional<DataReport> data;
  std::optional<GenerationReport> generation;
  std::optional<nlohmann::json> accuracy;  // the accuracy gate's measurements (accuracy_check.hpp)
  std::optional<nlohmann::json> profile;   // the job's profile section (profiler.hpp)
  nlohmann::json context = nlohmann::json::object();
  std::vector<std::string> warnings;
  std::string started_at, finished_at;
  // Not part of the document: a rank failed after the ranks began to
  // communicate, so the others may be stuck in a collective.
  bool ranks_diverged = false;
};

nlohmann::json to_json(const Result& result);

}  // namespace ts::worker
