#include "agent/judge/summary.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "shared/job_fields.hpp"
#include "shared/models/catalogue.hpp"

namespace ts::agent {
namespace {

using Pointer = nlohmann::json::json_pointer;

// The value at `pointer`, or null.
nlohmann::json at(const nlohmann::json& document, const std::string& pointer) {
  const Pointer path(pointer);
  return document.contains(path) ? document.at(path) : nlohmann::json(nullptr);
}

// What the torch_version column holds: PyTorch's version, or for a runner
// of another framework (whose context has no torch) "NAME VERSION" of it.
nlohmann::json framework_version(const nlohmann::json& result) {
  if (!result.contains("context")) return nullptr;
  if (const auto torch = at(result, "/context/torch_version"); torch.is_string()) return torch;
  const auto framework = at(result, "/context/framework");
  if (!framework.is_object()) return "unknown";
  return framework.at("name").get<std::string>() + " " + framework.at("version").get<std::string>();
}

// The one memory figure a result is compared by (docs/methodology.md): the
// timed phase's peak allocated on a GPU (by the framework's allocator, the
// *_allocator sources), its resident high-water mark above the process's
// baseline on CPU; and the warm-up/compile phase's apart, with which
// reading each is. Documents of runners before memory phases fall back to
// what they had.
void add_memory_figures(const nlohmann::json& result, nlohmann::json& summary) {
  const bool gpu = at(result, "/memory/source").is_string() &&
                   at(result, "/memory/source").get<std::string>().ends_with("_allocator");
  const std::vector<std::string> preference =
      gpu ? std::vector<std::string>{"peak_allocated_bytes", "peak_reserved_bytes"}
          : std::vector<std::string>{"rss_footprint_bytes", "peak_rss_bytes"};
  summary["peak_memory_bytes"] = nullptr;
  summary["peak_memory_field"] = nullptr;
  for (const auto& name : preference) {
    if (const auto value = at(result, "/memory/" + name); !value.is_null()) {
      summary["peak_memory_bytes"] = value;
      summary["peak_memory_field"] = name;
      break;
    }
  }
  const std::string warmup_field = gpu ? "warmup_peak_allocated_bytes" : "warmup_peak_rss_bytes";
  summary["warmup_peak_memory_bytes"] = at(result, "/memory/" + warmup_field);
  // A GPU result names its warm-up reading even without one, as it names its timed one.
  summary["warmup_peak_memory_field"] =
      gpu || !summary["warmup_peak_memory_bytes"].is_null() ? nlohmann::json(warmup_field) : nlohmann::json(nullptr);
}

// Capture (tracing, compilation) and the first iteration together: what a
// compiled run costs before its first useful step.
nlohmann::json compile_seconds(const nlohmann::json& result) {
  const auto capture = at(result, "/execution/capture_seconds");
  const auto first_iteration = at(result, "/timing/first_iteration_seconds");
  if (capture.is_null() && first_iteration.is_null()) return nullptr;
  return (capture.is_null() ? 0.0 : capture.get<double>()) +
         (first_iteration.is_null() ? 0.0 : first_iteration.get<double>());
}

// NVML's device memory of the job's processes at its highest, on the
// busiest of its GPUs (docs/gpu-telemetry.md); null without telemetry.
nlohmann::json gpu_process_memory(const nlohmann::json& result) {
  const auto gpus = at(result, "/telemetry/gpus");
  std::optional<int64_t> highest;
  if (gpus.is_array()) {
    for (const auto& gpu : gpus) {
      const auto& spread = gpu.at("process_memory_bytes");
      if (spread.is_null()) continue;
      highest = std::max(highest.value_or(0), static_cast<int64_t>(spread.at("max").get<double>()));
    }
  }
  return highest ? nlohmann::json(*highest) : nlohmann::json(nullptr);
}

// The first rows of the profile's summaries (docs/explain.md): the operator with the most self time (the
// device's where CUDA was recorded, the host's else) and the kernel with the most device time, with their
// shares of every operator's and kernel's; null without a profile, or an empty table.
void add_profile_tops(const nlohmann::json& result, nlohmann::json& summary) {
  for (const char* key : {"top_operator", "top_operator_share", "top_kernel", "top_kernel_share"})
    summary[key] = nullptr;
  const auto profile = result.value("profile", nlohmann::json());
  if (!profile.is_object() || profile.value("status", "") != "ok" || !profile.contains("totals")) return;
  const auto& totals = profile.at("totals");
  const auto share = [](double part, double whole) {
    return whole > 0 ? nlohmann::json(part / whole) : nlohmann::json();
  };
  const auto& activities = profile.at("activities");
  const bool device = std::find(activities.begin(), activities.end(), "cuda") != activities.end();
  const char* time = device ? "self_device_s" : "self_cpu_s";
  if (const auto& operators = profile.at("operators"); !operators.empty()) {
    summary["top_operator"] = operators.at(0).at("name");
    summary["top_operator_share"] = share(operators.at(0).at(time).get<double>(), totals.at(time).get<double>());
  }
  if (const auto& kernels = profile.at("kernels"); !kernels.empty()) {
    summary["top_kernel"] = kernels.at(0).at("name");
    summary["top_kernel_share"] =
        share(kernels.at(0).at("device_s").get<double>(), totals.at("kernel_s").get<double>());
  }
}

}  // namespace

nlohmann::json device_name(const nlohmann::json& result) {
  const auto gpus = at(result, "/context/gpus");
  const auto device = job_fields::get<std::string>(at(result, "/job"), "device");
  if (device.starts_with("cuda") && gpus.is_array() && !gpus.empty()) return gpus.at(0).value("name", "unknown GPU");
  return at(result, "/context/cpu_model");
}

nlohmann::json summary_of(const nlohmann::json& result) {
  // Lenient: a missing field is null here, and the store refuses a null where its column needs a value.
  const auto job = at(result, "/job").is_object() ? result.at("job") : nlohmann::json::object();
  const auto model = at(job, "/model");
  const auto data = job_fields::get<nlohmann::json>(job, "data");
  const bool reads_tokens = model.is_string() && models::reads_tokens(model.get<std::string>());
  nlohmann::json summary{
      {"job_id", at(job, "/job_id")},
      {"attempt", job_fields::get<int64_t>(job, "attempt")},
      {"sweep_id", at(job, "/sweep")},
      {"status", at(result, "/status")},
      {"model", model},
      {"task", job_fields::get<std::string>(job, "task")},
      {"batch_size", at(job, "/batch_size")},
      {"precision", job_fields::get<std::string>(job, "precision")},
      {"mode", job_fields::get<std::string>(job, "mode")},
      {"mode_ran", at(result, "/execution/mode")},
      {"compiler", at(result, "/execution/compiler")},
      {"runner", at(result, "/runner/name")},
      {"env", at(result, "/context/env/name")},
      {"model_commit", at(job, "/model_commit")},
      {"data", data.is_object() ? data.at("folder") : data},
      {"data_layout", at(result, "/execution/data_layout")},
      {"gpus", job_fields::get<int64_t>(job, "gpus")},
      {"device_name", device_name(result)},
      {"torch_version", framework_version(result)},
      {"host", at(result, "/context/hostname")},
      {"median_epoch_s", at(result, "/timing/median_epoch_seconds")},
      {"samples_per_s", at(result, "/timing/samples_per_second")},
      {"tokens_per_s", at(result, "/timing/tokens_per_second")},
      // A model that reads no tokens has no sequence length, whatever the job says.
      {"seq_len", reads_tokens ? at(job, "/seq_len") : nlohmann::json(nullptr)},
      {"prompt_len", at(job, "/prompt_len")},
      {"new_tokens", at(job, "/new_tokens")},
      {"prefill_s", at(result, "/generation/prefill_seconds_median")},
      {"decode_p50_s", at(result, "/generation/decode_latency/p50")},
      {"decode_p90_s", at(result, "/generation/decode_latency/p90")},
      {"decode_p99_s", at(result, "/generation/decode_latency/p99")},
      {"kv_cache_bytes", at(result, "/generation/kv_cache_bytes")},
      {"tokens_match", at(result, "/generation/matches_eager")},
      {"accuracy", at(result, "/accuracy/status")},
      {"accuracy_deviation", at(result, "/accuracy/deviation")},
      {"graph_breaks", at(result, "/execution/compile/graph_breaks")},
      {"recompilations", at(result, "/execution/compile/recompilations")},
      {"compile_mode", at(result, "/execution/compile/compile_mode")},
      {"compile_cache", at(result, "/execution/compile/cache/kind")},
      {"median_step_s", at(result, "/timing/median_step_seconds")},
      {"compile_s", compile_seconds(result)},
      {"warmup_s", at(result, "/timing/warmup_seconds")},
      {"peak_allocated_bytes", at(result, "/memory/peak_allocated_bytes")},
      {"peak_reserved_bytes", at(result, "/memory/peak_reserved_bytes")},
      {"gpu_process_memory_bytes", gpu_process_memory(result)},
      {"noisy", at(result, "/timing/noisy")},
      {"warmup_insufficient", at(result, "/timing/warmup_insufficient")},
      {"machine_busy", at(result, "/context/condition/busy")},
      {"throttled", at(result, "/telemetry/throttled")},
      {"flops_per_step", at(result, "/efficiency/flops_per_step")},
      {"achieved_flops_per_s", at(result, "/efficiency/achieved_flops_per_s")},
      {"peak_flops_per_s", at(result, "/efficiency/peak_flops_per_s")},
      {"mfu", at(result, "/efficiency/mfu")},
      {"peak_below_achieved", at(result, "/efficiency/peak_below_achieved")},
      {"input_stall_fraction", at(result, "/data/median_input_stall_fraction")},
      {"loader_images_per_s", at(result, "/data/loader_images_per_second")},
      {"input_bound", at(result, "/data/input_bound")},
      {"price_per_hour", at(result, "/cost/price_per_hour")},
      {"cost_per_million_samples", at(result, "/cost/per_million_samples")},
      {"cost_per_million_tokens", at(result, "/cost/per_million_tokens")},
      {"run_cost", at(result, "/cost/run")},
      {"energy_source", at(result, "/energy/source")},
      {"energy_joules", at(result, "/energy/joules")},
      {"average_power_w", at(result, "/energy/average_power_w")},
      {"joules_per_sample", at(result, "/energy/per_sample_joules")},
      {"joules_per_token", at(result, "/energy/per_token_joules")},
      {"fused_kernels", at(result, "/execution/fusion/fused_kernels")},
      {"fallback_reason", at(result, "/execution/fallback_reason")},
      {"error", at(result, "/error")},
  };
  add_memory_figures(result, summary);
  add_profile_tops(result, summary);
  return summary;
}

}  // namespace ts::agent
