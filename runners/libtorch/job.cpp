#include "runners/libtorch/job.hpp"

#include <algorithm>
#include <cstdlib>

#include "runners/libtorch/models/registry.hpp"
#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/job_resolution.hpp"

namespace ts::worker {
namespace {

template <class T>
void read_optional(const nlohmann::json& document, const char* key, T& into) {
  if (const auto found = document.find(key); found != document.end()) into = found->template get<T>();
}

}  // namespace

int64_t default_threads() {
  const char* local_ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int64_t ranks = local_ranks != nullptr ? std::max(1, std::atoi(local_ranks)) : 1;
  return std::max<int64_t>(1, job_resolution::cores_available() / ranks);
}

Job parse_job(const nlohmann::json& given) {
  // An agent's job comes resolved; one given by hand is resolved here by the same code (docs/worker.md).
  const auto document = job_resolution::resolve(given, {"libtorch", job_resolution::cores_available()});

  Job job;
  if (document.contains("job_id")) job.job_id = document.at("job_id").get<std::string>();
  if (document.contains("sweep")) job.sweep = document.at("sweep").get<std::string>();
  if (document.contains("dataset_size")) job.dataset_size = document.at("dataset_size").get<int64_t>();
  if (document.contains("timeout_s")) job.timeout_s = document.at("timeout_s").get<double>();
  for (auto [field, into] :
       {std::pair{"initial_weights", &job.initial_weights}, {"reference_batch", &job.reference_batch}}) {
    if (document.contains(field)) *into = document.at(field).get<std::string>();
  }
  job.model = document.at("model").get<std::string>();
  if (document.contains("model_root")) job.model_root = document.at("model_root").get<std::string>();
  job.batch_size = document.at("batch_size").get<int64_t>();
  read_optional(document, "attempt", job.attempt);
  read_optional(document, "runner", job.runner);
  read_optional(document, "task", job.task);
  read_optional(document, "mode", job.mode);
  read_optional(document, "fallback", job.fallback);
  read_optional(document, "accuracy", job.accuracy);
  read_optional(document, "precision", job.precision);
  read_optional(document, "memory_format", job.memory_format);
  read_optional(document, "tf32", job.tf32);
  read_optional(document, "cudnn_benchmark", job.cudnn_benchmark);
  read_optional(document, "epochs", job.epochs);
  read_optional(document, "warmup", job.warmup);
  read_optional(document, "data_batches", job.data_batches);
  read_optional(document, "device", job.device);
  read_optional(document, "threads", job.threads);
  read_optional(document, "interop_threads", job.interop_threads);
  read_optional(document, "seed", job.seed);
  read_optional(document, "optimizer", job.optimizer);
  read_optional(document, "lr", job.lr);
  read_optional(document, "momentum", job.momentum);
  read_optional(document, "weight_decay", job.weight_decay);
  read_optional(document, "loss_scale_initial", job.loss_scale_initial);
  read_optional(document, "loss_scale_growth_interval", job.loss_scale_growth_interval);
  read_optional(document, "gpus", job.gpus);
  read_optional(document, "bucket_mb", job.bucket_mb);
  read_optional(document, "overlap", job.overlap);
  read_optional(document, "data_parallel", job.data_parallel);
  read_optional(document, "hosts", job.hosts);
  read_optional(document, "labels", job.labels);
  read_optional(document, "profile", job.profile);

  for (const char* field : {"data", "loader_workers", "prefetch", "on_corrupt", "input_bound_above"}) {
    job.data_document[field] = document.at(field);
  }
  if (const auto& data = document.at("data"); data.is_object()) {
    job.data = DataSpec{data.at("folder").get<std::string>(), data.value("path", data.at("folder").get<std::string>()),
                        document.at("loader_workers").get<int64_t>(), document.at("prefetch").get<int64_t>(),
                        document.at("on_corrupt").get<std::string>() == "fail"};
  }
  // Given with a value of their own: only the torch-compile runner reads them.
  const auto& defaults = job_fields::defaults();
  for (const char* knob : {"backend", "compile_mode", "compile_cache", "dynamic", "fullgraph", "shapes"}) {
    if (document.contains(knob) && (!defaults.contains(knob) || document.at(knob) != defaults.at(knob))) {
      job.torch_compile_knobs.emplace_back(knob);
    }
  }
  const auto info = find_model(job.model, job.model_root);
  job.model_config = info.defaults;
  job.model_knobs = info.knobs;
  for (const auto& knob : model_knobs()) {
    if (document.contains(knob.name)) job.model_config.*knob.field = document.at(knob.name).get<int64_t>();
  }
  read_optional(document, "iters", job.iters);
  if (job.task == Task::generate) {
    job.prompt_len = document.at("prompt_len").get<int64_t>();
    job.new_tokens = document.at("new_tokens").get<int64_t>();
  }
  return job;
}

nlohmann::json to_json(const Job& job) {
  nlohmann::json out{{"schema_version", 1},
                     {"attempt", job.attempt},
                     {"runner", job.runner},
                     {"model", job.model},
                     {"task", job.task},
                     {"mode", job.mode},
                     {"fallback", job.fallback},
                     {"accuracy", job.accuracy},
                     {"precision", job.precision},
                     {"memory_format", job.memory_format},
                     {"tf32", job.tf32},
                     {"cudnn_benchmark", job.cudnn_benchmark},
                     {"batch_size", job.batch_size},
                     {"epochs", job.epochs},
                     {"warmup", job.warmup},
                     {"iters", job.iters},
                     {"data_batches", job.data_batches},
                     {"device", job.device},
                     {"threads", job.threads},
                     {"interop_threads", job.interop_threads},
                     {"seed", job.seed},
                     {"optimizer", job.optimizer},
                     {"lr", job.lr},
                     {"momentum", job.momentum},
                     {"weight_decay", job.weight_decay},
                     {"loss_scale_initial", job.loss_scale_initial},
                     {"loss_scale_growth_interval", job.loss_scale_growth_interval},
                     {"gpus", job.gpus},
                     {"bucket_mb", job.bucket_mb},
                     {"overlap", job.overlap},
                     {"data_parallel", job.data_parallel},
                     {"resolved", true}};
  out.update(job.data_document);
  if (!job.hosts.empty()) out["hosts"] = job.hosts;
  if (job.job_id) out["job_id"] = *job.job_id;
  if (job.sweep) out["sweep"] = *job.sweep;
  if (job.dataset_size) out["dataset_size"] = *job.dataset_size;
  if (job.task == Task::generate) {
    out["prompt_len"] = job.prompt_len;
    out["new_tokens"] = job.new_tokens;
  }
  if (job.timeout_s) out["timeout_s"] = *job.timeout_s;
  if (!job.labels.empty()) out["labels"] = job.labels;
  out["profile"] = job.profile;
  if (!job.model_root.empty()) out["model_root"] = job.model_root;
  if (job.initial_weights) out["initial_weights"] = *job.initial_weights;
  if (job.reference_batch) out["reference_batch"] = *job.reference_batch;
  for (const auto& knob : model_knobs()) {
    if (std::find(job.model_knobs.begin(), job.model_knobs.end(), knob.name) != job.model_knobs.end()) {
      out[knob.name] = job.model_config.*knob.field;
    }
  }
  return out;
}

}  // namespace ts::worker
