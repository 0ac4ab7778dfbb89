#include "readers/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "readers/change_points.hpp"
#include "readers/compiler_figures.hpp"
#include "readers/labels.hpp"
#include "readers/noise.hpp"
#include "readers/regressions.hpp"
#include "readers/report_assets.hpp"
#include "readers/reproduce.hpp"
#include "readers/sql_parts.hpp"
#include "readers/why_section.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/statistics.hpp"
#include "shared/timestamp.hpp"
#include "shared/version.hpp"
#include "store/artifacts.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

nlohmann::json table_json(const Table& table) { return {{"columns", table.columns}, {"rows", row_objects(table)}}; }

struct SweepRow {
  std::string id, name, created_at;
  nlohmann::json spec;
};

std::vector<SweepRow> sweeps_where(Database& database, const std::string& condition,
                                   const std::vector<std::string>& values) {
  auto select =
      database.prepare("SELECT sweep_id, name, created_at, spec FROM sweeps WHERE " + condition + " ORDER BY rowid");
  bind_texts(select, values);
  std::vector<SweepRow> rows;
  while (select.step()) {
    rows.push_back({select.text(0), select.text(1), select.text(2), nlohmann::json::parse(select.text(3))});
  }
  return rows;
}

// The sweeps reported on (see ReportOptions).
std::vector<SweepRow> current_sweeps(Database& database, const ResultFilter& filter) {
  if (!filter.sweeps.empty()) {
    std::vector<std::string> ids;
    for (const auto& sweep : filter.sweeps) {
      const auto id = store::find_sweep(database, sweep);
      if (!id) throw InvalidInput("--sweep", "no sweep with id or name '" + sweep + "'");
      ids.push_back(*id);
    }
    return sweeps_where(database, "sweep_id IN (" + placeholders(ids.size()) + ")", ids);
  }
  const auto newest = [&](std::vector<SweepRow> rows) {
    return rows.empty() ? rows : std::vector<SweepRow>{rows.back()};
  };
  if (!filter.tags.empty()) {
    auto rows = newest(sweeps_where(
        database,
        "sweep_id IN (SELECT sweep_id FROM sweep_tags WHERE tag IN (" + placeholders(filter.tags.size()) + "))",
        filter.tags));
    if (rows.empty()) throw InvalidInput("--tag", "no sweep carries the tag(s) given");
    return rows;
  }
  return newest(sweeps_where(database, "1", {}));
}

// The history: every sweep sharing a tag with the current ones (or `tags`), oldest first, at most `limit`.
std::vector<SweepRow> history_sweeps(Database& database, const std::vector<SweepRow>& current,
                                     const std::vector<std::string>& tags, std::size_t limit) {
  std::vector<std::string> wanted = tags;
  if (wanted.empty()) {
    std::vector<std::string> ids;
    for (const auto& sweep : current) ids.push_back(sweep.id);
    if (ids.empty()) return {};
    auto select = database.prepare("SELECT DISTINCT tag FROM sweep_tags WHERE sweep_id IN (" +
                                   placeholders(ids.size()) + ") ORDER BY tag");
    bind_texts(select, ids);
    while (select.step()) wanted.push_back(select.text(0));
  }
  if (wanted.empty()) return current;
  auto rows = sweeps_where(
      database, "sweep_id IN (SELECT sweep_id FROM sweep_tags WHERE tag IN (" + placeholders(wanted.size()) + "))",
      wanted);
  if (rows.size() > limit) rows.erase(rows.begin(), rows.end() - static_cast<std::ptrdiff_t>(limit));
  return rows;
}

std::vector<std::string> ids_of(const std::vector<SweepRow>& sweeps) {
  std::vector<std::string> ids;
  for (const auto& sweep : sweeps) ids.push_back(sweep.id);
  return ids;
}

// Task generate's configurations (docs/language-models.md): per-token
// decode latency (p50, p99), prefill, decode tokens/s and the eager gate,
// labelled without the mode, so eager and compiled sit side by side.
nlohmann::json generation_figures(Database& database, QueryOptions options) {
  options.metrics = {"decode_latency", "decode_p99", "prefill_time", "tokens_per_s"};
  const auto axes = configuration_axes_without("mode");
  auto figures = nlohmann::json::array();
  for (const auto& row : row_objects(query(database, options))) {
    if (row.at("task") != "generate" || row.at("decode_p50_ms").is_null()) continue;
    figures.push_back({{"configuration", label_of(row, axes)},
                       {"mode", row.at("mode")},
                       {"p50_ms", row.at("decode_p50_ms")},
                       {"p99_ms", row.at("decode_p99_ms")},
                       {"prefill_ms", row.at("prefill_ms")},
                       {"tokens_per_s", row.at("tokens_per_s")}});
  }
  return figures;
}

// The sweep document of the newest current sweep that ran the configuration.
const nlohmann::json* spec_for(Database& database, const std::vector<SweepRow>& current, const nlohmann::json& row) {
  std::string sql = "SELECT r.sweep_id FROM results r WHERE r.sweep_id IN (" + placeholders(current.size()) + ")";
  std::vector<std::string> values = ids_of(current);
  for (const char* axis : {"model", "task", "batch_size", "precision", "runner", "env", "gpus"}) {
    if (!row.contains(axis) || row.at(axis).is_null()) continue;
    sql += std::string(" AND r.") + axis + " = ?";
    values.push_back(json_text(row.at(axis)));
  }
  auto select = database.prepare(sql + " ORDER BY r.received_at DESC LIMIT 1");
  bind_texts(select, values);
  if (!select.step()) return nullptr;
  const auto id = select.text(0);
  for (const auto& sweep : current) {
    if (sweep.id == id) return &sweep.spec;
  }
  return nullptr;
}

// The newest result's software and machine per (host, runner, env) among the current sweeps.
nlohmann::json environments(Database& database, const std::vector<std::string>& sweep_ids) {
  auto rows = nlohmann::json::array();
  if (sweep_ids.empty()) return rows;
  auto select = database.prepare(
      "SELECT r.host, r.runner, r.device_name, d.document, r.env FROM results r JOIN result_documents d "
      "ON d.job_id = r.job_id AND d.attempt = r.attempt WHERE r.sweep_id IN (" +
      placeholders(sweep_ids.size()) + ") AND r.rowid IN (SELECT MAX(rowid) FROM results WHERE sweep_id IN (" +
      placeholders(sweep_ids.size()) + ") GROUP BY host, runner, env) ORDER BY r.host, r.runner, r.env");
  bind_texts(select, sweep_ids);
  bind_texts(select, sweep_ids, static_cast<int>(sweep_ids.size()) + 1);
  while (select.step()) {
    const auto document = nlohmann::json::parse(select.text(3));
    const auto context = document.value("context", nlohmann::json::object());
    std::string gpus;
    for (const auto& gpu : context.value("gpus", nlohmann::json::array())) {
      gpus += (gpus.empty() ? "" : ", ") + gpu.value("name", std::string("?"));
    }
    const auto framework = context.value("framework", nlohmann::json::object());
    // null for the runners of other frameworks, which name theirs instead
    const auto torch = context.value("torch_version", nlohmann::json(nullptr));
    rows.push_back({{"host", select.text(0)},
                    {"runner", select.text(1)},
                    {"env", select.is_null(4) ? nlohmann::json(nullptr) : nlohmann::json(select.text(4))},
                    {"device", select.text(2)},
                    {"framework", framework.is_object() && framework.contains("name")
                                      ? framework.value("name", "") + " " + framework.value("version", "")
                                      : "torch " + (torch.is_string() ? torch.get<std::string>() : "?")},
                    {"torch", torch},
                    {"cuda", context.value("cuda_version", nlohmann::json(nullptr))},
                    {"cudnn", context.value("cudnn_version", nlohmann::json(nullptr))},
                    {"driver", context.value("gpu_driver", nlohmann::json(nullptr))},
                    {"gpus", gpus},
                    {"cpu", context.value("cpu_model", std::string())},
                    {"cores", context.value("cpu_cores_available", nlohmann::json(nullptr))},
                    {"memory_bytes", context.value("memory_total_bytes", nlohmann::json(nullptr))},
                    {"blas", context.value("blas_library", nlohmann::json(nullptr))},
                    {"os", context.value("os", std::string())},
                    {"kernel", context.value("kernel", std::string())},
                    {"torchsweep", context.value("torchsweep_version", std::string()) + " (" +
                                       context.value("torchsweep_commit", std::string()) + ")"}});
  }
  return rows;
}

// The peaks each utilisation was measured against, per host, device and
// dtype: the figure, the probe's kernel that reached it, the runs judged
// against it, those whose rate exceeded it, and the highest MFU.
nlohmann::json peaks(Database& database, const std::vector<std::string>& sweep_ids) {
  auto rows = nlohmann::json::array();
  if (sweep_ids.empty()) return rows;
  auto select = database.prepare(
      "SELECT r.host, r.device_name, json_extract(d.document, '$.efficiency.peak_dtype'), r.peak_flops_per_s, "
      "json_extract(d.document, '$.efficiency.peak_kernel'), COUNT(*), SUM(COALESCE(r.peak_below_achieved, 0)), "
      "MAX(r.mfu) FROM results r JOIN result_documents d ON d.job_id = r.job_id AND d.attempt = r.attempt "
      "WHERE r.peak_flops_per_s IS NOT NULL AND r.sweep_id IN (" +
      placeholders(sweep_ids.size()) + ") GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4");
  bind_texts(select, sweep_ids);
  while (select.step()) {
    rows.push_back({{"host", select.text(0)},
                    {"device", select.text(1)},
                    {"dtype", select.text(2)},
                    {"peak_flops_per_s", select.real(3)},
                    {"kernel", select.is_null(4) ? nlohmann::json(nullptr) : nlohmann::json(select.text(4))},
                    {"runs", select.integer(5)},
                    {"peak_below_achieved", select.integer(6)},
                    {"highest_mfu", select.real(7)}});
  }
  return rows;
}

int64_t count_of(Database& database, const std::string& sql, const std::vector<std::string>& values) {
  auto select = database.prepare(sql);
  bind_texts(select, values);
  return select.step() ? select.integer(0) : 0;
}

// The speedups of one comparison (`compared_axis`: mode, or runner or env against
// `reference`) whose estimate exists, for the chart and its table.
void add_speedups(const Table& table, const std::string& compared_axis, const std::string& reference,
                  nlohmann::json& out) {
  const auto axes = configuration_axes_without(compared_axis);
  const bool by_mode = compared_axis == "mode";
  // A side's own environment (runners compared: docs/query.md), where the row names it.
  const auto side = [](const nlohmann::json& row, const std::string& value, const std::string& column) {
    const auto env = row.find("env:" + column);
    return env == row.end() || env->is_null() ? value : value + " (" + json_text(*env) + ")";
  };
  for (const auto& row : row_objects(table)) {
    if (row.at("speedup").is_null()) continue;
    out.push_back({{"configuration", label_of(row, axes)},
                   {"comparison", by_mode ? "compiled vs eager"
                                          : side(row, json_text(row.at(compared_axis)), "other") + " vs " +
                                                side(row, reference, reference)},
                   {"reference_runs", row.at(by_mode ? "runs:eager" : "runs:" + reference)},
                   {"other_runs", row.at(by_mode ? "runs:compiled" : "runs:other")},
                   {"speedup", row.at("speedup")},
                   {"low", row.at("speedup_low")},
                   {"high", row.at("speedup_high")},
                   {"memory_reduction", row.at("memory_reduction")},
                   {"inaccurate", row.at("inaccurate")}});
  }
}

// `noise`: the noise page's rows over the same history (report_data), each
// with its configuration's label.
nlohmann::json trends(Database& database, const ReportOptions& options, const std::vector<SweepRow>& history,
                      const std::string& baseline_id, const nlohmann::json& noise) {
  auto series = nlohmann::json::array();
  if (history.size() < 2) return series;
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < history.size(); ++i) position[history[i].id] = i;
  QueryOptions query_options;
  query_options.filter = options.filter;
  query_options.filter.sweeps = ids_of(history);
  query_options.filter.tags.clear();
  query_options.group_by = configuration_axes();
  query_options.group_by.push_back("sweep");
  query_options.metrics = {"epoch_time"};
  const auto table = query(database, query_options);
  // Each configuration's noise over the history's runs (docs/noise.md): a
  // night's median spreads by sqrt(run_cv^2 / runs + night_cv^2).
  std::map<std::string, std::pair<double, double>> noise_of;  // label -> (run_cv, night_cv)
  for (const auto& row : noise) {
    const auto& night = row.at("night_cv");
    noise_of[row.at("configuration").get<std::string>()] = {row.at("run_cv").get<double>(),
                                                            night.is_number() ? night.get<double>() : 0.0};
  }
  // configuration label -> (history position, median, runs)
  std::map<std::string, std::vector<std::tuple<std::size_t, double, int64_t>>> points;
  for (const auto& row : row_objects(table)) {
    const auto found = position.find(json_text(row.at("sweep")));
    if (found == position.end() || row.at("epoch_time_s").is_null()) continue;
    points[label_of(row, configuration_axes())].emplace_back(found->second, row.at("epoch_time_s").get<double>(),
                                                             row.at("runs").get<int64_t>());
  }
  for (auto& [label, entries] : points) {
    std::sort(entries.begin(), entries.end());
    std::vector<double> medians;
    auto rendered = nlohmann::json::array();
    for (const auto& [index, median, runs] : entries) {
      medians.push_back(median);
      rendered.push_back({{"index", index},
                          {"sweep", history[index].id},
                          {"name", history[index].name},
                          {"created_at", history[index].created_at},
                          {"epoch_time_s", median},
                          {"runs", runs}});
    }
    StepDetectionOptions detection;
    detection.minimum_change = options.rule.threshold;  // smaller steps are not worth a mark
    auto steps = nlohmann::json::array();
    for (const auto& step : detect_steps(medians, detection)) {
      const auto& at = entries[step.index];
      steps.push_back({{"index", std::get<0>(at)},
                       {"sweep", history[std::get<0>(at)].id},
                       {"before_s", step.before},
                       {"after_s", step.after},
                       {"change", step.change()},
                       {"direction", step.after > step.before ? "slower" : "faster"}});
    }
    nlohmann::json entry{{"configuration", label}, {"points", rendered}, {"change_points", steps}};
    if (const auto spread = noise_of.find(label); spread != noise_of.end()) {
      // Where 95% of the nights' medians fall when nothing changed, around the history's median.
      const auto [run_cv, night_cv] = spread->second;
      const double runs = stats::median([&] {
        std::vector<double> counts;
        for (const auto& point : entries) counts.push_back(static_cast<double>(std::get<2>(point)));
        return counts;
      }());
      const double night_spread = std::sqrt(run_cv * run_cv / std::max(runs, 1.0) + night_cv * night_cv);
      const double center = stats::median(medians);
      entry["noise_band"] = {{"low", center * std::exp(-1.96 * night_spread)},
                             {"high", center * std::exp(1.96 * night_spread)},
                             {"night_spread", night_spread}};
    }
    if (const auto base = position.find(baseline_id); base != position.end()) entry["baseline_index"] = base->second;
    series.push_back(std::move(entry));
  }
  return series;
}

}  // namespace

nlohmann::json report_data(Database& database, const ReportOptions& options) {
  const auto current = current_sweeps(database, options.filter);
  auto filter = options.filter;
  filter.sweeps = ids_of(current);
  filter.tags.clear();
  nlohmann::json data{{"title", current.size() == 1 ? "torchsweep: " + current[0].name : "torchsweep report"},
                      {"generated_at", utc_timestamp()},
                      {"torchsweep_version", std::string(version::number())},
                      {"store", options.store_path},
                      {"notes", nlohmann::json::array()}};
  auto& notes = data["notes"];
  auto sweeps = nlohmann::json::array();
  for (const auto& sweep : current)
    sweeps.push_back({{"sweep_id", sweep.id}, {"name", sweep.name}, {"created_at", sweep.created_at}});
  data["sweeps"] = sweeps;
  if (current.empty()) {
    notes.push_back("The store holds no sweep yet: nothing to report.");
    data["summary"] = {{"configurations", 0}, {"runs", 0},       {"failures", 0},
                       {"flagged", 0},        {"inaccurate", 0}, {"busy", 0}};
    return data;
  }

  QueryOptions plain_options;
  plain_options.filter = filter;
  plain_options.metrics = {
      "epoch_time",   "samples_per_s", "tokens_per_s",       "peak_memory",  "warmup_memory",
      "compile_time", "mfu",           "accuracy_deviation", "graph_breaks", "cost_per_million_samples"};
  const auto plain = query(database, plain_options);
  auto configurations = row_objects(plain);
  int64_t runs = 0, flagged = 0, inaccurate = 0, busy = 0, most_runs = 0;
  for (auto& row : configurations) {
    runs += row.at("runs").get<int64_t>();
    flagged += row.at("flagged").get<int64_t>();
    inaccurate += row.at("inaccurate").get<int64_t>();
    busy += row.at("busy").get<int64_t>();
    most_runs = std::max(most_runs, row.at("runs").get<int64_t>());
    row["configuration"] = label_of(row, configuration_axes());
    if (const auto* spec = spec_for(database, current, row)) row["reproduce"] = reproduce_command(*spec, row);
  }
  const auto ids = ids_of(current);
  const auto failures = count_of(
      database, "SELECT COUNT(*) FROM jobs WHERE state = 'failed' AND sweep_id IN (" + placeholders(ids.size()) + ")",
      ids);
  data["configurations"] = {{"columns", plain.columns}, {"rows", configurations}};
  nlohmann::json summary{{"configurations", configurations.size()},
                         {"runs", runs},
                         {"failures", failures},
                         {"flagged", flagged},
                         {"inaccurate", inaccurate},
                         {"busy", busy}};
  // What the priced runs cost together (docs/methodology.md); nothing when none was priced.
  auto cost =
      database.prepare("SELECT SUM(run_cost) FROM results WHERE sweep_id IN (" + placeholders(ids.size()) + ")");
  bind_texts(cost, ids);
  if (cost.step() && !cost.is_null(0)) summary["cost"] = cost.real(0);
  if (configurations.empty()) notes.push_back("No successful result in the selection: no figures to show.");
  if (!configurations.empty() && most_runs < static_cast<int64_t>(stats::minimum_runs_for_interval)) {
    notes.push_back("Every configuration has fewer than " + std::to_string(stats::minimum_runs_for_interval) +
                    " runs: speedups are shown without intervals, and no regression test can fire. Use repeats: 5 "
                    "or more.");
  }

  // Speedups: compiled against eager, and each other runner against the reference runner.
  auto speedups = nlohmann::json::array();
  auto memory = nlohmann::json::array();
  Table by_mode;
  if (!configurations.empty()) {
    QueryOptions compare = plain_options;
    compare.metrics = {"epoch_time", "peak_memory", "compile_time"};
    compare.compare = "mode";
    by_mode = query(database, compare);
    add_speedups(by_mode, "mode", "eager", speedups);
    data["compiler"] = compiler_figures(database, plain_options, by_mode);
    // The selection as a suite, as PyTorch's compiler dashboard sums one up:
    // per runner and environment, configurations run, passed, geomean speedup.
    if (!by_mode.rows.empty()) data["suite"] = row_objects(suite_summary(database, compare, {"runner", "env"}));
    for (const auto& row : row_objects(by_mode)) {
      if (row.at("peak_memory_mib:eager").is_null() || row.at("peak_memory_mib:compiled").is_null()) continue;
      const auto axes = configuration_axes_without("mode");
      memory.push_back({{"configuration", label_of(row, axes)},
                        {"eager_mib", row.at("peak_memory_mib:eager")},
                        {"compiled_mib", row.at("peak_memory_mib:compiled")},
                        {"field", row.at("memory_field")}});
    }
    std::set<std::string> runners;
    for (const auto& row : configurations) runners.insert(json_text(row.at("runner")));
    if (runners.size() > 1) {
      const auto reference = runners.contains("libtorch") ? std::string("libtorch") : *runners.begin();
      compare.compare = "runner=" + reference + ",*";
      add_speedups(query(database, compare), "runner", reference, speedups);
    }
    // Environments against the system's (PyTorch versions, docs/environments.md).
    std::set<std::string> envs;
    for (const auto& row : configurations) {
      if (!row.at("env").is_null()) envs.insert(json_text(row.at("env")));
    }
    if (envs.size() > 1) {
      const auto reference = envs.contains("system") ? std::string("system") : *envs.begin();
      compare.compare = "env=" + reference + ",*";
      add_speedups(query(database, compare), "env", reference, speedups);
    }
  }
  data["speedups"] = speedups;
  data["memory"] = memory;

  // Throughput against batch size; scaling against rank count where present.
  auto throughput = nlohmann::json::array(), scaling = nlohmann::json::array();
  for (const auto& row : configurations) {
    // A generation's throughput is its decode rate, in the decode chart.
    if (row.at("samples_per_s").is_null() || row.at("task") == "generate") continue;
    // A series: what varies within one model's chart but the batch size
    // (task and device are the same for nearly every lab's chart).
    const std::vector<std::string> series_axes{"precision", "mode", "gpus", "runner"};
    throughput.push_back({{"model", row.at("model")},
                          {"series", label_of(row, series_axes)},
                          {"batch_size", row.at("batch_size")},
                          {"samples_per_s", row.at("samples_per_s")},
                          {"tokens_per_s", row.at("tokens_per_s")}});  // a language model's; null for the others
    if (row.contains("scaling_efficiency") && !row.at("scaling_efficiency").is_null()) {
      const auto axes = configuration_axes_without("gpus");
      scaling.push_back({{"configuration", label_of(row, axes)},
                         {"gpus", row.at("gpus")},
                         {"efficiency", row.at("scaling_efficiency")},
                         {"low", row.at("scaling_efficiency_low")},
                         {"high", row.at("scaling_efficiency_high")}});
    }
  }
  data["throughput"] = throughput;
  data["scaling"] = scaling;
  data["generation"] = generation_figures(database, plain_options);

  std::string baseline_id;
  if (!options.baseline.empty()) {
    RegressionOptions regression_options{filter, options.baseline, options.rule};
    const auto table = regressions(database, regression_options);
    baseline_id = resolve_baseline(database, options.baseline, filter);
    data["baseline"] = baseline_id;
    data["regressions"] = table_json(table);
    std::map<std::string, int64_t> counted;
    for (const auto& row : data["regressions"]["rows"]) {
      const auto verdict = json_text(row.at("verdict"));
      if (verdict == "regressed" || verdict == "improved")
        ++counted[verdict == "regressed" ? "regressions" : "improvements"];
      if (!row.at("classification").is_null()) ++counted[json_text(row.at("classification"))];
    }
    for (const char* key : {"regressions", "improvements", "confirmed", "unconfirmed", "suspicious"})
      summary[key] = counted[key];
    summary["flagged_regressions"] = counted["flagged"];  // "flagged" counts the noisy runs
    // Compile time judged too, on the compiled runs: a night whose compile doubled regressed (docs/compiler.md).
    RegressionOptions compile_options = regression_options;
    compile_options.metric = "compile_time";
    compile_options.filter.where.emplace_back("mode", "compiled");
    const auto compile_table = regressions(database, compile_options);
    if (!compile_table.rows.empty()) {
      data["compile_regressions"] = table_json(compile_table);
      int64_t compile_regressions = 0;
      for (const auto& row : data["compile_regressions"]["rows"]) {
        compile_regressions += row.at("verdict") == "regressed" ? 1 : 0;
      }
      summary["compile_time_regressions"] = compile_regressions;
    }
  }
  data["summary"] = summary;
  const auto artifacts = store::ArtifactFiles::beside(options.store_path);
  data["why"] =
      why_section(database, {filter, &by_mode, data.contains("regressions") ? &data["regressions"] : nullptr,
                             baseline_id, artifacts ? artifacts->directory().string() : "", options.page_folder});

  const auto history = history_sweeps(database, current, options.filter.tags, options.history_limit);
  data["history"] = {{"sweeps", history.size()}, {"method", "L1 Potts step detection (asv-style), docs/report.md"}};
  // The noise page: each configuration's noise and the rules' false alarms
  // on its runs, over the history (the current sweeps without one); the
  // history charts' noise bands come from the same rows.
  NoiseOptions noise_options;
  noise_options.filter = filter;
  noise_options.filter.sweeps = history.size() >= 2 ? ids_of(history) : ids;
  noise_options.rule = options.rule;
  const auto noise = noise_table(database, noise_options);
  auto noise_rows = row_objects(noise);
  for (auto& row : noise_rows) row["configuration"] = label_of(row, configuration_axes());
  data["trends"] = trends(database, options, history, baseline_id, noise_rows);
  data["noise"] = {{"columns", noise.columns}, {"rows", noise_rows}};
  data["environments"] = environments(database, ids);
  data["peaks"] = peaks(database, ids);
  return data;
}

namespace {

// The text of an embedded asset, safe inside a <script> or <style> element.
std::string inline_asset(std::string_view name) {
  const auto& assets = embedded::report_assets();
  const auto found = assets.find(name);
  if (found == assets.end()) throw std::logic_error("report asset missing: " + std::string(name));
  std::string text(found->second);
  for (std::size_t at = 0; (at = text.find("</script", at)) != std::string::npos; at += 2) text.replace(at, 2, "<\\/");
  return text;
}

std::string html_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string report_page(const nlohmann::json& data) {
  // '<' only occurs inside JSON strings, where \u003c means the same: no
  // text of the store can close the data's <script> element.
  std::string json;
  for (const char c : data.dump()) json += c == '<' ? std::string("\\u003c") : std::string(1, c);
  const std::map<std::string, std::string> slots{{"{{title}}", html_escaped(data.value("title", std::string()))},
                                                 {"{{style}}", inline_asset("report.css")},
                                                 {"{{data}}", json},
                                                 {"{{vega}}", inline_asset("vega.min.js")},
                                                 {"{{script}}", inline_asset("report.js")}};
  const std::string page(embedded::report_assets().at("report.html"));
  std::string out;
  std::size_t at = 0;
  while (true) {
    const auto open = page.find("{{", at);
    if (open == std::string::npos) break;
    const auto close = page.find("}}", open);
    out += page.substr(at, open - at);
    out += slots.at(page.substr(open, close + 2 - open));
    at = close + 2;
  }
  return out + page.substr(at);
}

void write_report(Database& database, const ReportOptions& options, const std::string& path) {
  auto placed = options;
  placed.page_folder = std::filesystem::path(path).parent_path().string();
  if (placed.page_folder.empty()) placed.page_folder = ".";
  json_io::write_bytes_atomically(path, report_page(report_data(database, placed)));
}

}  // namespace ts::readers
