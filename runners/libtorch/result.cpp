#include "runners/libtorch/result.hpp"

#include <algorithm>
#include <cmath>

#include "shared/version.hpp"

namespace ts::worker {
namespace {

template <class T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// JSON has no NaN or infinity: a diverged loss is reported as null.
nlohmann::json finite_or_null(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const DistributedReport& d) {
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& rank : d.per_rank) per_rank.push_back(to_json(rank));
  return {{"backend", d.backend},
          {"ranks", d.ranks},
          {"nodes", d.nodes},
          {"overlap", d.overlap},
          {"bucket_bytes", d.bucket_bytes},
          {"buckets", d.buckets},
          {"gradient_bytes", d.gradient_bytes},
          {"all_reduces", d.all_reduces},
          {"all_reduce_seconds", d.all_reduce_seconds},
          {"algorithm_bandwidth_gbps", optional_json(d.algorithm_bandwidth_gbps)},
          {"bus_bandwidth_gbps", optional_json(d.bus_bandwidth_gbps)},
          {"communication_fraction", d.communication_fraction},
          {"replicas_identical", d.replicas_identical},
          {"per_rank", per_rank}};
}

nlohmann::json to_json(const ExecutionReport& e) {
  nlohmann::json out{{"task", e.task},
                     {"mode", e.mode},
                     {"compiler", e.compiler},
                     {"fallback_reason", optional_json(e.fallback_reason)},
                     {"capture_seconds", optional_json(e.capture_seconds)},
                     {"precision", e.precision},
                     {"autocast_dtype", optional_json(e.autocast_dtype)},
                     {"device", e.device},
                     {"model_parameters", e.model_parameters},
                     {"initial_parameter_l1", e.initial_parameter_l1},
                     {"initial_weights", optional_json(e.initial_weights)},
                     {"reference_batch", optional_json(e.reference_batch)},
                     {"data_layout", optional_json(e.data_layout)}};
  out["fusion"] = e.fusion ? nlohmann::json{{"fused_kernels", e.fusion->fused_kernels},
                                            {"fused_launches_per_step", e.fusion->fused_launches_per_step},
                                            {"kernel_names", e.fusion->kernel_names}}
                           : nlohmann::json(nullptr);
  out["loss_scaling"] = e.loss_scaling ? nlohmann::json{{"initial_scale", e.loss_scaling->initial_scale},
                                                        {"final_scale", e.loss_scaling->final_scale},
                                                        {"skipped_steps", e.loss_scaling->skipped_steps}}
                                       : nlohmann::json(nullptr);
  out["distributed"] = e.distributed ? to_json(*e.distributed) : nlohmann::json(nullptr);
  if (!e.math.is_null()) out["math"] = e.math;
  return out;
}

nlohmann::json to_json(const TimingReport& t) {
  nlohmann::json out{{"clock", t.clock},
                     {"warmup_iterations", t.warmup_iterations},
                     {"warmup_seconds", t.warmup_seconds},
                     {"first_iteration_seconds", optional_json(t.first_iteration_seconds)},
                     {"epochs", t.epoch_seconds.size()},
                     {"iterations_per_epoch", t.iterations_per_epoch},
                     {"epoch_seconds", t.epoch_seconds},
                     {"step_seconds", t.step_seconds}};
  return out;
}

nlohmann::json to_json(const MemoryReport& m) {
  nlohmann::json out{{"source", m.source}};
  const auto put = [&](const char* name, const auto& value) {
    if (value) out[name] = *value;
  };
  put("peak_rss_bytes", m.peak_rss_bytes);
  put("rss_growth_bytes", m.rss_growth_bytes);
  put("rss_footprint_bytes", m.rss_footprint_bytes);
  put("baseline_rss_bytes", m.baseline_rss_bytes);
  put("warmup_peak_rss_bytes", m.warmup_peak_rss_bytes);
  put("hwm_reset", m.hwm_reset);
  put("peak_allocated_bytes", m.peak_allocated_bytes);
  put("peak_reserved_bytes", m.peak_reserved_bytes);
  put("warmup_peak_allocated_bytes", m.warmup_peak_allocated_bytes);
  put("warmup_peak_reserved_bytes", m.warmup_peak_reserved_bytes);
  return out;
}

}  // namespace

nlohmann::json to_json(const RankReport& r) {
  return {{"rank", r.rank},
          {"host", r.host},
          {"device", r.device},
          {"step_seconds", r.step_seconds},
          {"median_step_seconds", r.median_step_seconds},
          {"all_reduce_seconds", r.all_reduce_seconds},
          {"exposed_communication_seconds", r.exposed_communication_seconds},
          {"compute_seconds", r.compute_seconds},
          {"peak_memory_bytes", optional_json(r.peak_memory_bytes)}};
}

RankReport rank_report_from_json(const nlohmann::json& d) {
  RankReport r;
  r.rank = d.at("rank").get<int64_t>();
  r.host = d.at("host").get<std::string>();
  r.device = d.at("device").get<std::string>();
  r.step_seconds = d.at("step_seconds").get<std::vector<std::vector<double>>>();
  r.median_step_seconds = d.at("median_step_seconds").get<double>();
  r.all_reduce_seconds = d.at("all_reduce_seconds").get<double>();
  r.exposed_communication_seconds = d.at("exposed_communication_seconds").get<double>();
  r.compute_seconds = d.at("compute_seconds").get<double>();
  if (!d.at("peak_memory_bytes").is_null()) r.peak_memory_bytes = d.at("peak_memory_bytes").get<int64_t>();
  return r;
}

nlohmann::json to_json(const DataReport& d) {
  const std::vector<std::string> examples(d.corrupt_files.begin(),
                                          d.corrupt_files.begin() + std::min<std::size_t>(10, d.corrupt_files.size()));
  return {{"format", "imagefolder"},
          {"folder", d.folder},
          {"images", d.images},
          {"classes", d.classes},
          {"loader", d.loader},
          {"workers", d.workers},
          {"prefetch", d.prefetch},
          {"corrupt_files", d.corrupt_files.size()},
          {"corrupt_examples", examples},
          {"epoch_input_stall_seconds", d.epoch_input_stall_seconds},
          {"loader_images_per_second", d.loader_images_per_second},
          {"loader_pass_images", d.loader_pass_images}};
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json out{{"schema_version", 1},
                     {"status", r.status},
                     {"runner", {{"name", "libtorch"}, {"version", std::string(version::number())}}},
                     {"job", to_json(r.job)},
                     {"context", r.context},
                     {"warnings", r.warnings},
                     {"started_at", r.started_at},
                     {"finished_at", r.finished_at}};
  if (r.error) out["error"] = *r.error;
  if (r.execution) out["execution"] = to_json(*r.execution);
  if (r.timing) out["timing"] = to_json(*r.timing);
  if (r.memory) out["memory"] = to_json(*r.memory);
  if (r.data) out["data"] = to_json(*r.data);
  if (r.accuracy) out["accuracy"] = *r.accuracy;
  if (r.profile) out["profile"] = *r.profile;
  if (r.generation) {
    const auto& g = *r.generation;
    out["generation"] = {
        {"prompt_len", g.prompt_len}, {"new_tokens", g.new_tokens},         {"prefill_seconds", g.prefill_seconds},
        {"cache", "static"},          {"kv_cache_bytes", g.kv_cache_bytes}, {"tokens", g.tokens},
        {"matches_eager", nullptr},   {"first_mismatch", nullptr}};
  }
  if (r.loss) {
    nlohmann::json finals = nlohmann::json::array();
    for (const auto& value : r.loss->epoch_final) finals.push_back(finite_or_null(value));
    out["loss"] = {{"first_step", finite_or_null(r.loss->first_step)},
                   {"second_step", finite_or_null(r.loss->second_step)},
                   {"reference_eval", finite_or_null(r.loss->reference_eval)},
                   {"epoch_final", finals}};
  }
  return out;
}

}  // namespace ts::worker
