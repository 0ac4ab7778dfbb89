#include "readers/explanation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "readers/pooled_profile.hpp"
#include "readers/reproduce.hpp"
#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "shared/statistics.hpp"
#include "store/configuration.hpp"

namespace ts::readers {
namespace {

using nlohmann::json;

// The shared filter narrowed by a side (its sweeps and tags replace the filter's).
ResultFilter narrowed(const ResultFilter& shared, const ExplainSideSpec& side) {
  ResultFilter filter = shared;
  for (const auto& [key, value] : side.where) {
    std::erase_if(filter.where, [&](const auto& pair) { return pair.first == key; });
    filter.where.emplace_back(key, value);
  }
  if (!side.sweeps.empty()) filter.sweeps = side.sweeps;
  if (!side.tags.empty()) filter.tags = side.tags;
  return filter;
}

std::string axes_select() {
  std::string select;
  for (const auto& axis : store::configuration_axes()) select += axis.sql + ", ";
  return select;
}

// "model (mlp, resnet18), precision (bf16, fp32)": the axes whose values differ among `configurations`.
std::string differing_axes(const std::set<json>& configurations) {
  std::string text;
  for (const auto& axis : store::configuration_axes()) {
    std::set<std::string> values;
    for (const auto& configuration : configurations) values.insert(json_text(configuration.at(axis.name)));
    if (values.size() < 2) continue;
    std::string listed;
    for (const auto& value : values) listed += (listed.empty() ? "" : ", ") + (value.empty() ? "none" : value);
    text += (text.empty() ? "" : ", ") + axis.name + " (" + listed + ")";
  }
  return text;
}

// The results of exactly `configuration`, as a condition over alias r.
Condition same_configuration(const json& configuration) {
  Condition condition;
  for (const auto& axis : store::configuration_axes()) {
    const auto& value = configuration.at(axis.name);
    if (value.is_null()) {
      condition.add(axis.sql + " IS NULL");
    } else {
      condition.add(axis.sql + " = ?", {json_text(value)});
    }
  }
  return condition;
}

// The newest ok result `condition` lets through with a profile taken.
std::optional<std::pair<std::string, std::int64_t>> newest_profiled(Database& database, const Condition& condition) {
  auto select = database.prepare(
      "SELECT r.job_id, r.attempt FROM results r JOIN result_documents d ON d.job_id = r.job_id AND d.attempt = "
      "r.attempt WHERE r.status = 'ok' AND json_extract(d.document, '$.profile.status') = 'ok' AND " +
      condition.sql + " ORDER BY r.received_at DESC LIMIT 1");
  bind_condition(select, condition);
  if (!select.step()) return std::nullopt;
  return std::make_pair(select.text(0), select.integer(1));
}

ExplainSide resolve_side(Database& database, const ExplainOptions& options, std::size_t index) {
  ExplainSide side;
  side.name = index == 0 ? "A" : "B";
  side.spec = options.sides[index].text;
  side.filter = narrowed(options.filter, options.sides[index]);
  const auto& name = side.name;
  const auto& spec = side.spec;
  auto filter = side.filter;
  filter.include_failed = false;
  const auto condition = condition_of(database, filter);
  auto select = database.prepare("SELECT " + axes_select() +
                                 "r.sweep_id, r.job_id, r.attempt, r.torch_version FROM results r WHERE " +
                                 condition.sql + " ORDER BY r.received_at DESC");
  bind_condition(select, condition);
  const auto& axes = store::configuration_axes();
  const int column = static_cast<int>(axes.size());
  std::set<json> configurations;
  std::pair<std::string, std::int64_t> newest;
  while (select.step()) {
    json configuration = json::object();
    for (std::size_t a = 0; a < axes.size(); ++a) configuration[axes[a].name] = cell(select, static_cast<int>(a));
    if (configurations.empty()) {
      side.sweep_id = select.text(column);
      newest = {select.text(column + 1), select.integer(column + 2)};
    }
    configurations.insert(configuration);
    if (!select.is_null(column + 3)) side.torch_versions.insert(select.text(column + 3));
    side.configuration = configuration;
    ++side.runs;
  }
  if (configurations.empty()) {
    throw InvalidInput(name, "no ok result passes '" + spec + "' with the other filters: nothing to explain");
  }
  if (configurations.size() > 1) {
    throw InvalidInput(name, "'" + spec + "' names " + std::to_string(configurations.size()) +
                                 " configurations, which differ in " + differing_axes(configurations) +
                                 ": add AXIS=VALUE to the side or --where");
  }
  // What a profiling run starts from: the newest run's job as submitted; an imported result has no job row, so
  // its resolved job less what resolution and the run added.
  auto documents = database.prepare(
      "SELECT j.document, d.document FROM result_documents d LEFT JOIN jobs j ON j.job_id = d.job_id "
      "WHERE d.job_id = ? AND d.attempt = ?");
  documents.bind_all(newest.first, newest.second);
  documents.step();
  side.job = documents.is_null(0) ? json::parse(documents.text_view(1)).at("job") : json::parse(documents.text_view(0));
  for (const char* added : {"job_id", "attempt", "sweep", "resolved", "model_root", "schema_version"}) {
    side.job.erase(added);
  }
  return side;
}

struct Figures {
  std::vector<double> steps;  // a sample a run (each run's median timed step), or every timed step
  bool pooled_steps = false;  // fewer than stats::minimum_runs_for_interval runs: the steps themselves
  std::vector<double> peak_memory, warmup_memory, compile;
  json document;                  // the newest profiled run's result
  std::vector<json> profiles;     // the profiled runs' profile sections, newest first
  std::vector<double> own_steps;  // their own median timed steps
  std::string peak_field;
};

std::vector<double> column_values(Database& database, const std::string& sql, const Condition& condition) {
  auto select = database.prepare(sql + " WHERE " + condition.sql);
  bind_condition(select, condition);
  std::vector<double> values;
  while (select.step()) {
    if (!select.is_null(0)) values.push_back(select.real(0));
  }
  return values;
}

Figures figures_of(Database& database, const ExplainSide& side) {
  Figures figures;
  auto filter = side.filter;
  filter.include_failed = false;
  const auto condition = condition_of(database, filter);
  figures.steps = column_values(database, "SELECT r.median_step_s FROM results r", condition);
  if (figures.steps.size() < stats::minimum_runs_for_interval) {
    figures.steps = column_values(database,
                                  "SELECT s.seconds FROM result_steps s JOIN results r ON r.job_id = "
                                  "s.job_id AND r.attempt = s.attempt",
                                  condition);
    figures.pooled_steps = true;
  }
  figures.peak_memory = column_values(database, "SELECT r.peak_memory_bytes FROM results r", condition);
  figures.warmup_memory = column_values(database, "SELECT r.warmup_peak_memory_bytes FROM results r", condition);
  figures.compile = column_values(database, "SELECT r.compile_s FROM results r", condition);
  // The side's profiled runs; none passing its filter: the configuration's newest anywhere (explain's own).
  const std::string profiled_sql =
      "SELECT d.document, r.peak_memory_field, r.median_step_s FROM result_documents d JOIN results r ON r.job_id = "
      "d.job_id AND r.attempt = d.attempt WHERE json_extract(d.document, '$.profile.status') = 'ok' AND ";
  auto select = database.prepare(profiled_sql + condition.sql + " ORDER BY r.received_at DESC");
  bind_condition(select, condition);
  bool any = select.step();
  if (!any) {
    select = database.prepare(profiled_sql + "d.job_id = ? AND d.attempt = ?");
    select.bind_all(side.profiled->first, side.profiled->second);
    any = select.step();
  }
  for (; any; any = select.step()) {
    auto document = json::parse(select.text_view(0));
    figures.profiles.push_back(document.at("profile"));
    figures.own_steps.push_back(select.real(2));
    if (figures.document.is_null()) {
      figures.document = std::move(document);
      figures.peak_field = select.is_null(1) ? "" : select.text(1);
    }
  }
  return figures;
}

json median_of(const std::vector<double>& values) {
  return values.empty() ? json(nullptr) : json(stats::median(values));
}

// Rows of two profiles' tables paired by name: each side's calls and time, the difference, its share of
// `measured`, what changed; the rows either side left out of its top rows as one row of their own.
json paired_rows(const json& a, const json& b, const std::string& time, std::size_t top, double measured,
                 const std::array<double, 2>& totals, const std::array<bool, 2>& complete) {
  std::map<std::string, std::array<json, 2>> by_name;
  std::array<double, 2> listed{0, 0};
  for (std::size_t s = 0; s < 2; ++s) {
    for (const auto& row : (s == 0 ? a : b)) {
      by_name[row.at("name").get<std::string>()][s] = row;
      listed[s] += row.at(time).get<double>();
    }
  }
  json rows = json::array();
  const auto add = [&](const std::string& name, const std::string& change, const std::array<json, 2>& calls,
                       const std::array<double, 2>& seconds) {
    const double difference = seconds[1] - seconds[0];
    rows.push_back({{"name", name},
                    {"change", change},
                    {"calls", {calls[0], calls[1]}},
                    {"seconds", {seconds[0], seconds[1]}},
                    {"difference_s", difference},
                    {"share", measured != 0 ? json(difference / measured) : json(nullptr)}});
  };
  for (const auto& [name, sides] : by_name) {
    std::array<double, 2> seconds{0, 0};
    std::array<json, 2> calls{0, 0};
    for (std::size_t s = 0; s < 2; ++s) {
      if (sides[s].is_null()) continue;
      seconds[s] = sides[s].at(time).get<double>();
      calls[s] = sides[s].at("calls");
    }
    // Absent from a side: gone only where that side's rows were all of its operators.
    std::string change = "changed";
    if (sides[0].is_null()) change = complete[0] ? "added" : "not in A's top rows";
    if (sides[1].is_null()) change = complete[1] ? "removed" : "not in B's top rows";
    if (change.starts_with("not in")) {
      calls[sides[0].is_null() ? 0 : 1] = nullptr;
    }
    add(name, change, calls, seconds);
  }
  std::sort(rows.begin(), rows.end(), [](const json& x, const json& y) {
    return std::abs(x.at("difference_s").get<double>()) > std::abs(y.at("difference_s").get<double>());
  });
  if (rows.size() > top) rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(top), rows.end());
  if (!complete[0] || !complete[1]) {
    add("(the operators beyond either side's top rows)", "rest", {nullptr, nullptr},
        {std::max(0.0, totals[0] - listed[0]), std::max(0.0, totals[1] - listed[1])});
  }
  return rows;
}

std::set<std::string> strings_at(const json& document, const char* pointer, const char* key = nullptr) {
  std::set<std::string> found;
  const auto list = document.value(json::json_pointer(pointer), json::array());
  for (const auto& item : list.is_array() ? list : json::array()) {
    found.insert(key ? item.at(key).get<std::string>() : item.get<std::string>());
  }
  return found;
}

json set_difference(const std::set<std::string>& from, const std::set<std::string>& without) {
  json only = json::array();
  for (const auto& item : from) {
    if (!without.contains(item)) only.push_back(item);
  }
  return only;
}

// The compiler's own differences (docs/compiler.md): graphs, graph breaks and their reasons, recompilations,
// fallback operators, and compile time by phase; null on a side that did not compile.
json compiler_differences(const std::array<Figures, 2>& sides) {
  json compiled = json::array();
  for (const auto& side : sides) {
    compiled.push_back(side.document.value(json::json_pointer("/execution/compile"), json(nullptr)));
  }
  json section{{"sides", json::array()}};
  for (std::size_t s = 0; s < 2; ++s) {
    const auto& compile = compiled[s];
    if (compile.is_null()) {
      section["sides"].push_back(nullptr);
      continue;
    }
    section["sides"].push_back({{"graphs", compile.value("graphs", json(nullptr))},
                                {"graph_breaks", compile.value("graph_breaks", json(nullptr))},
                                {"recompilations", compile.value("recompilations", json(nullptr))},
                                {"compile_s", median_of(sides[s].compile)},
                                {"phases", compile.value("phases", json(nullptr))}});
  }
  const auto& a = sides[0].document;
  const auto& b = sides[1].document;
  const auto reasons = [](const json& d) { return strings_at(d, "/execution/compile/break_reasons"); };
  const auto fallbacks = [](const json& d) {
    return strings_at(d, "/execution/compile/fallback_operators", "operator");
  };
  section["break_reasons"] = {{"added", set_difference(reasons(b), reasons(a))},
                              {"removed", set_difference(reasons(a), reasons(b))}};
  section["fallback_operators"] = {{"added", set_difference(fallbacks(b), fallbacks(a))},
                                   {"removed", set_difference(fallbacks(a), fallbacks(b))}};
  return section;
}

json trace_of(Database& database, const ExplainOptions& options, const std::pair<std::string, std::int64_t>& run) {
  auto select =
      database.prepare("SELECT sha256, bytes FROM artifacts WHERE job_id = ? AND attempt = ? AND kind = 'trace'");
  select.bind_all(run.first, run.second);
  if (!select.step()) return {{"stored", false}};
  const auto sha256 = select.text(0);
  json trace{{"stored", true}, {"sha256", sha256}, {"bytes", select.integer(1)}};
  if (!options.artifacts.empty()) {
    const auto path = std::filesystem::path(options.artifacts) / sha256.substr(0, 2) / sha256;
    trace["path"] = path.string();
    trace["present"] = std::filesystem::exists(path);  // false once torchsweep gc removed it
  }
  return trace;
}

json sweep_spec(Database& database, const std::string& sweep_id) {
  auto select = database.prepare("SELECT spec FROM sweeps WHERE sweep_id = ?");
  select.bind_all(sweep_id);
  return select.step() ? json::parse(select.text_view(0)) : json(nullptr);
}

}  // namespace

ExplainSideSpec parse_side(const std::string& name, const std::string& text) {
  if (text.empty()) throw InvalidInput(name, "expected AXIS=VALUE[,AXIS=VALUE...], got nothing");
  ExplainSideSpec side{text, {}, {}, {}};
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(',', start), text.size());
    const auto term = text.substr(start, end - start);
    const auto equals = term.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == term.size()) {
      throw InvalidInput(name, "expected AXIS=VALUE, got '" + term + "' in '" + text + "'");
    }
    const auto key = term.substr(0, equals), value = term.substr(equals + 1);
    if (key == "sweep") {
      side.sweeps.push_back(value);
    } else if (key == "tag") {
      side.tags.push_back(value);
    } else {
      try {
        axis_named(key, name);
      } catch (const InvalidInput& unknown) {
        throw InvalidInput(name, std::string(unknown.problem()) + " (or sweep, tag)");
      }
      side.where.emplace_back(key, value);
    }
    start = end + 1;
  }
  return side;
}

std::array<ExplainSide, 2> explain_sides(Database& database, const ExplainOptions& options) {
  std::array<ExplainSide, 2> sides{resolve_side(database, options, 0), resolve_side(database, options, 1)};
  // One configuration on both sides (a night against its baseline): each side's profile must be among its own
  // runs, as a profile taken now would be of today's software on both.
  const bool same = sides[0].configuration == sides[1].configuration;
  for (auto& side : sides) {
    side.same_configuration = same;
    if (same) {
      auto filter = side.filter;
      filter.include_failed = false;
      side.profiled = newest_profiled(database, condition_of(database, filter));
    } else {
      side.profiled = newest_profiled(database, same_configuration(side.configuration));
    }
  }
  return sides;
}

json explain(Database& database, const ExplainOptions& options) {
  const auto sides = explain_sides(database, options);
  for (const auto& side : sides) {
    if (!side.profiled && side.same_configuration) {
      throw InvalidInput(side.name, "'" + side.spec +
                                        "' has no profiled run, and both sides are one configuration (they differ "
                                        "in sweep, tag or time): their own runs must carry profiles (the job field "
                                        "profile), as a profile taken now would be of today's software on both");
    }
    if (!side.profiled) {
      throw InvalidInput(side.name, "'" + side.spec +
                                        "' has no profiled run: run explain without --no-profile, "
                                        "or a job of it with the profile field");
    }
  }
  const std::array<Figures, 2> figures{figures_of(database, sides[0]), figures_of(database, sides[1])};
  const std::array<json, 2> profiles{pooled_profile(figures[0].profiles), pooled_profile(figures[1].profiles)};
  const auto on_device = [](const json& profile) {
    const auto activities = profile.at("activities");
    return std::find(activities.begin(), activities.end(), "cuda") != activities.end();
  };
  const bool device = on_device(profiles[0]) && on_device(profiles[1]);
  const std::string time = device ? "self_device_s" : "self_cpu_s";

  stats::BootstrapOptions bootstrap;
  bootstrap.seed = options.seed;
  const auto measured = stats::difference_of_medians(figures[1].steps, figures[0].steps, bootstrap);
  // Per side: T the timed median step (every run), t the profiled runs' own, P their profiled step, O their
  // operators' self time (medians over the profiled runs). T = O + (P - O) - (P - t) + (T - t), on both sides.
  std::array<double, 2> timed{}, own{}, profiled{}, operators{};
  for (std::size_t s = 0; s < 2; ++s) {
    timed[s] = stats::median(figures[s].steps);
    own[s] = stats::median(figures[s].own_steps);
    profiled[s] = profiles[s].at("step_s").get<double>();
    operators[s] = profiles[s].at("totals").at(time).get<double>();
  }
  const auto difference = [](const std::array<double, 2>& x, const std::array<double, 2>& y) {
    return (x[1] - y[1]) - (x[0] - y[0]);
  };
  const auto larger = [](const std::array<double, 2>& x, const std::array<double, 2>& y) {
    return std::max(std::abs(x[0] - y[0]), std::abs(x[1] - y[1]));
  };
  const double operators_difference = operators[1] - operators[0];
  const double unexplained = measured.estimate - operators_difference;
  // What the profile cannot see, as measured: the run-to-run noise of the difference, the profiler's own cost a
  // step and how far the profiled runs' timed steps were from every run's.
  const double bound = (measured.high - measured.low) / 2 + larger(profiled, own) + larger(timed, own);

  json document{{"sides", json::array()}};
  for (std::size_t s = 0; s < 2; ++s) {
    const auto& side = sides[s];
    const auto spec = sweep_spec(database, side.sweep_id);
    document["sides"].push_back(
        {{"side", side.name},
         {"spec", side.spec},
         {"configuration", side.configuration},
         {"runs", side.runs},
         {"profiled_run", {{"job_id", side.profiled->first}, {"attempt", side.profiled->second}}},
         {"profiled_runs", profiles[s].at("runs")},
         {"profiler", profiles[s].at("profiler")},
         {"trace", trace_of(database, options, *side.profiled)},
         {"reproduce", spec.is_null() ? json(nullptr) : json(reproduce_command(spec, side.configuration))}});
  }
  document["time"] = time;
  document["timed"] = {{"step_s", timed},
                       {"difference_s", measured.estimate},
                       {"interval", {measured.low, measured.high}},
                       {"level", measured.level},
                       {"samples", {figures[0].steps.size(), figures[1].steps.size()}},
                       {"interval_from", figures[0].pooled_steps || figures[1].pooled_steps ? "steps" : "runs"}};
  document["profiled"] = {{"step_s", profiled}, {"operators_s", operators}, {"timed_step_s", own}};
  document["reconciliation"] = {{"measured_s", measured.estimate},
                                {"operators_s", operators_difference},
                                {"outside_operators_s", difference(profiled, operators)},
                                {"profiler_cost_s", difference(profiled, own)},
                                {"profiled_runs_s", difference(timed, own)},
                                {"unexplained_s", unexplained},
                                {"bound_s", bound},
                                {"within_bound", std::abs(unexplained) <= bound}};
  const std::array<bool, 2> complete{profiles[0].at("complete").get<bool>(), profiles[1].at("complete").get<bool>()};
  // Shares of a difference its interval cannot tell from none would be shares of noise.
  const double shared = measured.low > 0 || measured.high < 0 ? measured.estimate : 0.0;
  document["operators"] = paired_rows(profiles[0].at("operators"), profiles[1].at("operators"), time, options.top,
                                      shared, operators, complete);
  const std::array<double, 2> kernel_totals{profiles[0].at("totals").at("kernel_s").get<double>(),
                                            profiles[1].at("totals").at("kernel_s").get<double>()};
  document["kernels"] = profiles[0].at("kernels").empty() && profiles[1].at("kernels").empty()
                            ? json::array()
                            : paired_rows(profiles[0].at("kernels"), profiles[1].at("kernels"), "device_s", options.top,
                                          shared, kernel_totals, complete);
  document["compiler"] = compiler_differences(figures);
  document["memory"] = {
      {"peak_bytes", {median_of(figures[0].peak_memory), median_of(figures[1].peak_memory)}},
      {"warmup_peak_bytes", {median_of(figures[0].warmup_memory), median_of(figures[1].warmup_memory)}},
      {"fields", {figures[0].peak_field, figures[1].peak_field}}};
  return document;
}

}  // namespace ts::readers
