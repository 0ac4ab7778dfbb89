#pragma once
// The job document (schemas/job.schema.json): the only place its fields are
// spelled on the worker side.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

enum class Task { train, infer, generate };
// graph is the TensorFlow runner's tf.function mode: valid in a job, unsupported here.
enum class Mode { eager, compiled, graph };
enum class Precision { fp32, bf16, fp16 };
enum class Fallback { none, eager };
enum class AccuracyGate { check, required };

NLOHMANN_JSON_SERIALIZE_ENUM(Task, {{Task::train, "train"}, {Task::infer, "infer"}, {Task::generate, "generate"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Mode, {{Mode::eager, "eager"}, {Mode::compiled, "compiled"}, {Mode::graph, "graph"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Precision,
                             {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}, {Precision::fp16, "fp16"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Fallback, {{Fallback::none, "none"}, {Fallback::eager, "eager"}})
NLOHMANN_JSON_SERIALIZE_ENUM(AccuracyGate, {{AccuracyGate::check, "check"}, {AccuracyGate::required, "required"}})

// imagefolder data (docs/data.md): the folder to read and its loader's knobs.
struct DataSpec {
  std::string folder;  // data.folder as given: the dataset's name
  std::string path;    // what is read: data.path (set by the agent), else folder
  int64_t loader_workers = 0, prefetch = 0;
  bool fail_on_corrupt = false;
};

// A resolved job (shared/job_resolution.hpp) as the worker reads it.
struct Job {
  std::optional<std::string> job_id;
  int64_t attempt = 0;
  std::optional<std::string> sweep;
  std::string runner;
  std::string model;
  std::string model_root;  // torchscript:FILE's --model-path directory (set by the agent)
  Task task{};
  Mode mode{};
  Fallback fallback{};
  AccuracyGate accuracy{};  // judged by the agent (docs/compiler.md); echoed
  Precision precision{};
  std::string memory_format;          // contiguous or channels_last: an image model's weights and inputs
  std::string tf32, cudnn_benchmark;  // the fp32 math policy: framework, on or off (runners/libtorch/math_policy.hpp)
  int64_t batch_size = 0;
  int64_t epochs = 0;
  int64_t warmup = 0;
  int64_t iters = 0;                       // as resolved (shared/job_resolution.hpp)
  int64_t prompt_len = 0, new_tokens = 0;  // task generate's
  std::optional<int64_t> dataset_size;
  int64_t data_batches = 0;
  std::optional<DataSpec> data;          // none: synthetic data
  nlohmann::json data_document;          // the job's data, loader_workers, ... as given or defaulted (echoed)
  ModelConfig model_config;              // the model's defaults overridden by the job
  std::vector<std::string> model_knobs;  // the knobs of model_config the model reads
  std::string device;
  int64_t threads = 0;  // as resolved: never 0
  int64_t interop_threads = 0;
  int64_t seed = 0;
  std::string optimizer;
  double lr = 0;
  double momentum = 0;
  double weight_decay = 0;
  // fp16 training: dynamic loss scaling (the LossScaler).
  double loss_scale_initial = 0;
  int64_t loss_scale_growth_interval = 0;
  int64_t gpus = 0;      // data-parallel ranks: GPUs, or CPU ranks on a CPU device
  double bucket_mb = 0;  // gradient bucket size of multi-rank training, in MiB
  bool overlap = false;  // all-reduce buckets while backward runs
  // "always": a one-rank job runs the data-parallel path too (a one-rank
  // NCCL communicator, its all-reduces and the distributed report).
  std::string data_parallel;
  std::vector<std::string> hosts;  // multi-node jobs: mpirun --host entries (read by the agent)
  std::optional<double> timeout_s;
  std::map<std::string, std::string> labels;
  // The shared starting point (docs/frameworks.md): safetensors files on this node.
  std::optional<std::string> initial_weights, reference_batch;
  // Profiled steps after the timed epochs (docs/explain.md); null: none. As resolved, echoed.
  nlohmann::json profile;
  // torch.compile knobs (backend, compile_mode, ...), which only the
  // torch-compile runner reads; reported as result warnings too.
  std::vector<std::string> torch_compile_knobs;
};

// The resolved job (shared/job_resolution.hpp) `document` is, or resolves
// to when nobody resolved it (a run by hand), read into its fields.
// Throws ts::InvalidInput naming the field on any problem.
Job parse_job(const nlohmann::json& document);

// The resolved job as a job document (validates against the same schema).
nlohmann::json to_json(const Job& job);

// The default intra-op thread count: the cores available, shared evenly by
// the ranks mpirun started on this node (OMPI_COMM_WORLD_LOCAL_SIZE).
int64_t default_threads();

}  // namespace ts::worker
