#include "readers/vocabulary.hpp"

#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "shared/timestamp.hpp"
#include "store/configuration.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

template <class Entry>
std::vector<std::string> names_of(const std::vector<Entry>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.name);
  return names;
}

// The entry of `table` called `name`, or an error listing the known names.
template <class Entry>
const Entry& named(const std::vector<Entry>& table, const std::string& name, const std::string& option,
                   const std::string& what) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry;
  }
  std::string known;
  for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.name;
  throw InvalidInput(option, "unknown " + what + " '" + name + "'; expected one of: " + known);
}

// An axis of the store's list of configuration axes (store/configuration.cpp), which spells its SQL; `follows` as
// Axis has it.
Axis configuration_axis(const std::string& name, std::vector<std::string> follows = {}) {
  for (const auto& axis : store::configuration_axes()) {
    if (axis.name == name) return {axis.name, axis.sql, axis.sparse, std::move(follows)};
  }
  throw std::logic_error("'" + name + "' is not a configuration axis");
}

}  // namespace

const std::vector<std::string>& configuration_axes() {
  static const auto names = names_of(store::configuration_axes());
  return names;
}

// The fixed vocabulary of axes: the only names that become SQL.
const std::vector<Axis>& axis_table() {
  static const std::vector<Axis> axes{
      configuration_axis("model"),
      configuration_axis("task"),
      configuration_axis("batch_size"),
      configuration_axis("seq_len"),
      configuration_axis("prompt_len"),
      configuration_axis("new_tokens"),
      configuration_axis("precision"),
      configuration_axis("mode"),
      {"requested_mode", "r.mode"},
      {"compiler", "r.compiler", false, {"mode", "requested_mode", "runner"}},
      configuration_axis("runner"),
      // Each runner has its own environments.
      configuration_axis("env", {"runner"}),
      configuration_axis("model_commit", {"model"}),
      configuration_axis("gpus"),
      configuration_axis("device_name"),
      {"torch_version", "r.torch_version", false, {"runner", "env"}},
      {"host", "r.host"},
      {"agent", "r.agent"},
      {"sweep", "r.sweep_id"},
      {"status", "r.status"},
      // The accuracy gate's verdict on a compiled run; none for eager runs (docs/compiler.md).
      {"accuracy", "COALESCE(r.accuracy, 'none')"},
      // A torch.compile job's mode and the compiler caches it started with (docs/compiler.md): not
      // default axes, so compiled and eager runs of a configuration still pair.
      {"compile_mode", "r.compile_mode", true, {"mode", "requested_mode"}},
      {"compile_cache", "r.compile_cache", true, {"mode", "requested_mode"}},
      configuration_axis("data"),
      // It follows the runner, so that a runner comparison pairs NCHW PyTorch with NHWC Keras (docs/query.md).
      configuration_axis("memory_format", {"runner"}),
      // Whether NVML saw a GPU of the job slow itself down (docs/gpu-telemetry.md).
      {"throttled", "CASE r.throttled WHEN 1 THEN 'yes' WHEN 0 THEN 'no' ELSE 'unknown' END"},
      // Whether the agent found the node busy while the job ran (docs/noise.md).
      {"condition", "CASE r.machine_busy WHEN 1 THEN 'busy' WHEN 0 THEN 'quiet' ELSE 'unknown' END"},
  };
  return axes;
}

const std::vector<Metric>& metric_table() {
  static const std::vector<Metric> metrics{
      {"epoch_time", "epoch_time_s", "r.median_epoch_s"},
      {"step_time", "step_time_s", "r.median_step_s"},
      {"samples_per_s", "samples_per_s", "r.samples_per_s", 1, true},
      {"tokens_per_s", "tokens_per_s", "r.tokens_per_s", 1, true},  // language models (docs/language-models.md)
      // Task generate's (docs/language-models.md).
      {"prefill_time", "prefill_ms", "r.prefill_s", 1e3},
      {"decode_latency", "decode_p50_ms", "r.decode_p50_s", 1e3},
      {"decode_p90", "decode_p90_ms", "r.decode_p90_s", 1e3},
      {"decode_p99", "decode_p99_ms", "r.decode_p99_s", 1e3},
      {"kv_cache", "kv_cache_mib", "r.kv_cache_bytes", 1.0 / (1024 * 1024)},
      {"peak_memory", "peak_memory_mib", "r.peak_memory_bytes", 1.0 / (1024 * 1024), false, "r.peak_memory_field"},
      {"warmup_memory", "warmup_memory_mib", "r.warmup_peak_memory_bytes", 1.0 / (1024 * 1024), false,
       "r.warmup_peak_memory_field"},
      {"reserved_memory", "reserved_memory_mib", "r.peak_reserved_bytes", 1.0 / (1024 * 1024), false,
       "CASE WHEN r.peak_reserved_bytes IS NOT NULL THEN 'peak_reserved_bytes' END"},
      {"achieved_flops", "achieved_tflops_per_s", "r.achieved_flops_per_s", 1e-12, true},
      {"mfu", "mfu", "r.mfu", 1, true},
      {"compile_time", "compile_time_s", "r.compile_s"},
      // What the compiler did (docs/compiler.md).
      {"graph_breaks", "graph_breaks", "r.graph_breaks"},
      {"recompilations", "recompilations", "r.recompilations"},
      {"accuracy_deviation", "accuracy_deviation", "r.accuracy_deviation"},
      {"warmup_time", "warmup_time_s", "r.warmup_s"},
      {"input_stall", "input_stall", "r.input_stall_fraction"},
      {"loader_throughput", "loader_images_per_s", "r.loader_images_per_s", 1, true},
      {"gpu_process_memory", "gpu_process_memory_mib", "r.gpu_process_memory_bytes", 1.0 / (1024 * 1024)},
      // What a result costs at a price per device-hour, in the price's unit (docs/methodology.md).
      {"cost_per_million_samples", "cost_per_million_samples", "r.cost_per_million_samples"},
      {"cost_per_million_tokens", "cost_per_million_tokens", "r.cost_per_million_tokens"},
      {"run_cost", "run_cost", "r.run_cost"},
      // Energy over the timed epochs from the devices' counters (docs/methodology.md).
      {"energy", "energy_j", "r.energy_joules"},
      {"power", "average_power_w", "r.average_power_w"},
      {"joules_per_sample", "joules_per_sample", "r.joules_per_sample"},
      {"joules_per_token", "joules_per_token", "r.joules_per_token"},
  };
  return metrics;
}

const Axis& axis_named(const std::string& name, const std::string& option) {
  return named(axis_table(), name, option, "axis");
}

std::vector<const Axis*> axes_named(const std::vector<std::string>& names) {
  std::vector<const Axis*> axes;
  for (const auto& name : names) axes.push_back(&axis_named(name, "--group-by"));
  return axes;
}

const Metric& metric_named(const std::string& name, const std::string& option) {
  return named(metric_table(), name, option, "metric");
}

void bind_condition(Statement& statement, const Condition& condition, int first) {
  bind_texts(statement, condition.values, first);
}

// A sweep id, or the newest sweep of that name; results stored without a
// sweep row (imported documents) are matched by the name they carry.
std::string resolve_sweep(Database& database, const std::string& id_or_name, const std::string& option) {
  if (auto found = find_sweep(database, id_or_name)) return *found;
  auto loose = database.prepare("SELECT 1 FROM results WHERE sweep_id = ? LIMIT 1");
  loose.bind_all(id_or_name);
  if (loose.step()) return id_or_name;
  throw InvalidInput(option, "no sweep with id or name '" + id_or_name + "'");
}

Condition condition_of(Database& database, const ResultFilter& filter) {
  Condition condition;
  if (!filter.include_failed) condition.add("r.status = 'ok'");
  const std::string confirmation_run = store::confirmation_run_sql;
  if (filter.purpose == "measurement") {
    condition.add(std::string("NOT ") + confirmation_run);
  } else if (filter.purpose == "confirmation") {
    condition.add(confirmation_run);
  } else if (filter.purpose != "any") {
    throw InvalidInput("--purpose", "expected measurement, confirmation or any, got '" + filter.purpose + "'");
  }
  if (!filter.sweeps.empty()) {
    std::vector<std::string> ids;
    for (const auto& sweep : filter.sweeps) ids.push_back(resolve_sweep(database, sweep, "--sweep"));
    condition.add("r.sweep_id IN (" + placeholders(ids.size()) + ")", ids);
  }
  if (!filter.tags.empty()) {
    condition.add(
        "r.sweep_id IN (SELECT sweep_id FROM sweep_tags WHERE tag IN (" + placeholders(filter.tags.size()) + "))",
        filter.tags);
  }
  // received_at is written by utc_timestamp(): fixed width, so instants in
  // the same form compare as strings.
  if (!filter.since.empty()) condition.add("r.received_at >= ?", {utc_instant(filter.since, "--since")});
  if (!filter.until.empty()) condition.add("r.received_at < ?", {utc_instant(filter.until, "--until")});
  for (const auto& [name, value] : filter.where) condition.add(axis_named(name, "--where").sql + " = ?", {value});
  return condition;
}

const std::vector<std::string>& query_axes() {
  static const auto names = names_of(axis_table());
  return names;
}

const std::vector<std::string>& query_metrics() {
  static const auto names = names_of(metric_table());
  return names;
}

}  // namespace ts::readers
