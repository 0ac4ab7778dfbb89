#include "readers/vocabulary.hpp"

#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "shared/timestamp.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

// The warm-up figure is peak allocated where the timed one is (CUDA), the
// resident high-water mark otherwise.
constexpr const char* warmup_memory_field =
    "CASE WHEN r.peak_memory_field IN ('peak_allocated_bytes', 'peak_reserved_bytes') "
    "THEN 'warmup_peak_allocated_bytes' WHEN r.warmup_peak_memory_bytes IS NOT NULL THEN 'warmup_peak_rss_bytes' END";

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

}  // namespace

const std::vector<std::string>& configuration_axes() {
  static const std::vector<std::string> axes{"model",      "task",      "batch_size", "seq_len", "prompt_len",
                                             "new_tokens", "precision", "mode",       "gpus",    "device_name",
                                             "runner",     "env",       "data"};
  return axes;
}

// The fixed vocabulary of axes: the only names that become SQL.
const std::vector<Axis>& axis_table() {
  static const std::vector<Axis> axes{
      {"model", "r.model"},
      {"task", "r.task"},
      {"batch_size", "r.batch_size"},
      // A language model's tokens a sample, and task generate's prompt and new tokens (docs/language-models.md).
      {"seq_len", "r.seq_len", true},
      {"prompt_len", "r.prompt_len", true},
      {"new_tokens", "r.new_tokens", true},
      {"precision", "r.precision"},
      {"mode", "COALESCE(r.mode_ran, r.mode)"},  // what ran: a compiled job that fell back counts as eager
      {"requested_mode", "r.mode"},
      {"compiler", "r.compiler"},
      {"runner", "r.runner"},
      {"env", "r.env"},  // the environment it ran in (docs/environments.md)
      {"gpus", "r.gpus"},
      {"device_name", "r.device_name"},
      {"torch_version", "r.torch_version"},
      {"host", "r.host"},
      {"agent", "r.agent"},
      {"sweep", "r.sweep_id"},
      {"status", "r.status"},
      // The accuracy gate's verdict on a compiled run; none for eager runs (docs/compiler.md).
      {"accuracy", "COALESCE(r.accuracy, 'none')"},
      // A torch.compile job's mode and the compiler caches it started with (docs/compiler.md): not
      // default axes, so compiled and eager runs of a configuration still pair.
      {"compile_mode", "r.compile_mode", true},
      {"compile_cache", "r.compile_cache", true},
      {"data", "r.data"},  // synthetic, or the imagefolder dataset's folder
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
       warmup_memory_field},
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
  };
  return metrics;
}

const Axis& axis_named(const std::string& name, const std::string& option) {
  return named(axis_table(), name, option, "axis");
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
  // Results without a job row (imported documents) are measurements.
  constexpr const char* confirmation_run =
      "EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = r.job_id AND j.purpose = 'confirmation')";
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
