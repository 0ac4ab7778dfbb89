#include "readers/noise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "readers/change_points.hpp"
#include "readers/labels.hpp"
#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "shared/statistics.hpp"
#include "shared/variance_components.hpp"

namespace ts::readers {
namespace {

struct Configuration {
  std::string key;                   // the configuration axes' values, as a JSON array
  std::vector<nlohmann::json> axes;  // the same, one cell an axis
  std::vector<stats::ProcessSample> processes;
  // The same processes with their sweep (a night) as the upper level: the
  // between-night component where the runs span several sweeps.
  std::vector<stats::ProcessSample> by_night;
  std::vector<double> seconds;
  std::vector<double> run_medians;  // each run's median epoch, in the order the runs arrived
};

// The standard deviation on the log scale: a relative spread.
nlohmann::json spread(const std::optional<double>& variance) {
  return variance ? nlohmann::json(std::sqrt(*variance)) : nlohmann::json(nullptr);
}

// The spread of one run's mean epoch on one node, at the configuration's
// typical epochs a run (the process and within components).
double run_spread(const stats::VarianceComponents& components) {
  const int per_process = components.values / components.processes;
  return std::sqrt(components.variance_of_a_run_mean(per_process, false));
}

// The between-night component: the sweeps as the upper level, where the
// configuration's runs span two sweeps or more.
nlohmann::json night_spread(const Configuration& configuration) {
  const auto nights = stats::estimate_variance_components(configuration.by_night);
  return nights.nodes >= 2 ? spread(nights.node) : nlohmann::json(nullptr);
}

// A configuration is named by query's configuration axes, whatever sweep
// its results came from: a calibration and the nights it speaks for pool.
std::string configuration_sql() {
  std::string sql;
  for (const auto& axis : configuration_axes()) {
    sql += (sql.empty() ? "" : ", ") + axis_named(axis, "--noise").sql;
  }
  return "json_array(" + sql + ")";
}

std::vector<Configuration> configurations(Database& database, const ResultFilter& filter) {
  const auto condition = condition_of(database, filter);
  const auto key = configuration_sql();
  auto select = database.prepare("SELECT " + key +
                                 ", r.host, r.job_id, r.attempt, e.seconds, r.sweep_id FROM results r JOIN "
                                 "result_epochs e "
                                 "ON e.job_id = r.job_id AND e.attempt = r.attempt WHERE " +
                                 condition.sql + " AND e.seconds > 0 ORDER BY 1, r.host, r.job_id, r.attempt, e.epoch");
  bind_condition(select, condition);
  auto runs = database.prepare("SELECT " + key + ", r.median_epoch_s FROM results r WHERE " + condition.sql +
                               " AND r.median_epoch_s > 0 ORDER BY 1, r.received_at, r.rowid");
  bind_condition(runs, condition);
  std::map<std::string, std::vector<double>> run_medians;
  while (runs.step()) run_medians[runs.text(0)].push_back(runs.real(1));
  std::vector<Configuration> found;
  std::map<std::string, int> nodes, nights;  // a configuration's hosts and sweeps, numbered
  std::string last_process;
  while (select.step()) {
    const auto configuration_key = select.text(0), host = select.text(1);
    const auto process = select.text(2) + "/" + std::to_string(select.integer(3));
    if (found.empty() || found.back().key != configuration_key) {
      const auto values = nlohmann::json::parse(configuration_key);
      found.push_back({configuration_key, {values.begin(), values.end()}, {}, {}, {}, {}});
      nodes.clear();
      nights.clear();
      last_process.clear();
    }
    auto& configuration = found.back();
    if (process != last_process) {
      const auto node = nodes.try_emplace(host, static_cast<int>(nodes.size())).first->second;
      configuration.processes.push_back({node, {}});
      const auto night = nights.try_emplace(select.text(5), static_cast<int>(nights.size())).first->second;
      configuration.by_night.push_back({night, {}});
      last_process = process;
    }
    const double seconds = select.real(4);
    configuration.processes.back().values.push_back(std::log(seconds));
    configuration.by_night.back().values.push_back(std::log(seconds));
    configuration.seconds.push_back(seconds);
  }
  for (auto& configuration : found) configuration.run_medians = std::move(run_medians[configuration.key]);
  return found;
}

}  // namespace

FalseAlarms aa_false_alarms(const std::vector<double>& runs, const RegressionRule& rule, std::size_t night_runs) {
  if (night_runs == 0) throw std::invalid_argument("A/A pairs need at least one run a night");
  FalseAlarms counted;
  const auto k = static_cast<std::ptrdiff_t>(night_runs);
  for (auto start = runs.begin(); runs.end() - start >= 2 * k; start += 2 * k) {
    const Samples then(start, start + k), now(start + k, start + 2 * k);
    ++counted.pairs;
    if (judge_change(now, then, false, rule).verdict == "regressed") ++counted.alarms;
  }
  return counted;
}

FalseAlarms confirm_false_alarms(const std::vector<double>& runs, const RegressionRule& rule, std::size_t night_runs) {
  if (night_runs == 0) throw std::invalid_argument("A/A triples need at least one run a night");
  FalseAlarms counted;
  const auto k = static_cast<std::ptrdiff_t>(night_runs);
  for (auto start = runs.begin(); runs.end() - start >= 3 * k; start += 3 * k) {
    const Samples baseline(start, start + k), night(start + k, start + 2 * k), reruns(start + 2 * k, start + 3 * k);
    ++counted.pairs;
    if (judge_change(night, baseline, false, rule).verdict == "regressed" &&
        judge_change(reruns, baseline, false, rule).verdict == "regressed")
      ++counted.alarms;
  }
  return counted;
}

FalseAlarms change_point_false_alarms(const std::vector<double>& runs, const RegressionRule& rule,
                                      std::size_t night_runs) {
  if (night_runs == 0) throw std::invalid_argument("A/A nights need at least one run a night");
  std::vector<double> nights;
  const auto k = static_cast<std::ptrdiff_t>(night_runs);
  for (auto start = runs.begin(); runs.end() - start >= k; start += k)
    nights.push_back(stats::median({start, start + k}));
  StepDetectionOptions detection;
  detection.minimum_change = rule.threshold;  // as the report marks them
  FalseAlarms counted;
  if (nights.size() < detection.minimum_points) return counted;
  counted.pairs = nights.size() - 1;
  for (const auto& step : detect_steps(nights, detection))
    if (step.change() > rule.threshold) ++counted.alarms;
  return counted;
}

std::vector<CalibratedConfiguration> calibrated_configurations(Database& database, const std::string& tag) {
  ResultFilter filter;
  filter.tags = {tag};
  std::vector<CalibratedConfiguration> calibrated;
  for (const auto& configuration : configurations(database, filter)) {
    const auto components = stats::estimate_variance_components(configuration.processes);
    if (components.processes < 2) continue;
    calibrated.push_back({configuration.axes, run_spread(components)});
  }
  return calibrated;
}

std::optional<double> calibrated_spread(const std::vector<CalibratedConfiguration>& calibrated,
                                        const std::vector<std::string>& group_axes,
                                        const std::vector<nlohmann::json>& key) {
  const auto& axes = configuration_axes();
  std::vector<std::pair<std::size_t, std::size_t>> shared;  // (group column, configuration column)
  for (std::size_t g = 0; g < group_axes.size(); ++g) {
    const auto at = std::find(axes.begin(), axes.end(), group_axes[g]);
    if (at != axes.end()) shared.emplace_back(g, static_cast<std::size_t>(at - axes.begin()));
  }
  std::optional<double> largest;
  for (const auto& configuration : calibrated) {
    const bool agrees = std::all_of(shared.begin(), shared.end(), [&](const auto& pair) {
      return configuration.axes[pair.second] == key[pair.first];
    });
    if (agrees) largest = std::max(largest.value_or(0.0), configuration.run_sd);
  }
  return largest;
}

Table noise_table(Database& database, const NoiseOptions& options) {
  if (options.night_runs < 2) throw InvalidInput("--night-runs", "at least 2 runs a night");
  Table table{configuration_axes(), {}};
  for (const char* column : {"nodes",
                             "processes",
                             "epochs",
                             "median_epoch_s",
                             "within_cv",
                             "process_cv",
                             "node_cv",
                             "night_cv",
                             "run_cv",
                             "aa_pairs",
                             "false_alarms",
                             "false_alarm_rate",
                             "rate_low",
                             "rate_high",
                             "nominal_rate",
                             "confirm_triples",
                             "confirm_false_alarms",
                             "confirm_rate",
                             "history_nights",
                             "change_point_alarms",
                             "change_point_rate",
                             "threshold_needed",
                             "power_10pct",
                             "note"}) {
    table.columns.push_back(column);
  }
  // "regressed" is one side of a two-sided test at alpha.
  const double nominal = options.rule.alpha / 2;
  std::vector<std::pair<double, std::vector<nlohmann::json>>> rows;
  for (auto& configuration : configurations(database, options.filter)) {
    const auto components = stats::estimate_variance_components(configuration.processes);
    const double run = run_spread(components);
    std::string note;
    if (components.processes < 2) {
      note = "one process: between-process noise unknown; calibrate (docs/noise.md)";
    } else if (!components.process) {
      note = "one process a node: process_cv is within node_cv";
    }
    const auto add_note = [&note](const std::string& text) { note += (note.empty() ? "" : "; ") + text; };
    if (components.process_truncated || components.node_truncated) add_note("a negative estimate was set to 0");
    const auto alarms = aa_false_alarms(configuration.run_medians, options.rule, options.night_runs);
    nlohmann::json rate = nullptr, low = nullptr, high = nullptr;
    if (alarms.pairs > 0) {
      const auto interval = stats::wilson_interval(alarms.alarms, alarms.pairs);
      rate = interval.estimate;
      low = interval.low;
      high = interval.high;
      if (interval.low > nominal) add_note("false alarms above the rule's nominal rate");
    } else {
      add_note("fewer than " + std::to_string(2 * options.night_runs) + " runs: no A/A pair");
    }
    // confirm's rule and the report's change points on the same runs.
    const auto confirmed = confirm_false_alarms(configuration.run_medians, options.rule, options.night_runs);
    const auto steps = change_point_false_alarms(configuration.run_medians, options.rule, options.night_runs);
    const auto ratio = [](const FalseAlarms& counted) {
      return counted.pairs > 0
                 ? nlohmann::json(static_cast<double>(counted.alarms) / static_cast<double>(counted.pairs))
                 : nlohmann::json(nullptr);
    };
    if (confirmed.pairs > 0 && stats::wilson_interval(confirmed.alarms, confirmed.pairs).low > nominal * nominal)
      add_note("confirmed false alarms: the reruns share the night's noise");
    // The threshold in force: the user's, or what this noise requires if more.
    const double needed = needed_threshold(run * run, options.night_runs, options.night_runs, options.rule);
    auto rule = options.rule;
    if (needed > rule.threshold) {
      add_note(fmt::format("its noise needs --threshold {:.3f}", needed));
      rule.threshold = needed;
    }
    const double power = detection_power(run, options.night_runs, options.night_runs, stated_power_slowdown, rule);
    auto row = configuration.axes;
    for (nlohmann::json cell : {nlohmann::json(components.nodes),
                                nlohmann::json(components.processes),
                                nlohmann::json(components.values),
                                nlohmann::json(stats::median(configuration.seconds)),
                                spread(components.within),
                                spread(components.process),
                                spread(components.node),
                                night_spread(configuration),
                                nlohmann::json(run),
                                nlohmann::json(alarms.pairs),
                                nlohmann::json(alarms.alarms),
                                rate,
                                low,
                                high,
                                nlohmann::json(nominal),
                                nlohmann::json(confirmed.pairs),
                                nlohmann::json(confirmed.alarms),
                                ratio(confirmed),
                                nlohmann::json(steps.pairs + (steps.pairs > 0 ? 1 : 0)),
                                nlohmann::json(steps.alarms),
                                ratio(steps),
                                nlohmann::json(needed),
                                nlohmann::json(power),
                                note.empty() ? nlohmann::json(nullptr) : nlohmann::json(note)}) {
      row.push_back(std::move(cell));
    }
    rows.push_back({run, std::move(row)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [run, row] : rows) table.rows.push_back(std::move(row));
  // The sequence axes only where a result has them (a language model's).
  for (std::size_t column = configuration_axes().size(); column-- > 0;) {
    if (std::all_of(table.rows.begin(), table.rows.end(), [&](const auto& row) { return row[column].is_null(); })) {
      table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(column));
      for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(column));
    }
  }
  return table;
}

std::vector<nlohmann::json> calibration_records(const Table& noise) {
  const auto first_figure = column_of(noise, "nodes");
  std::vector<nlohmann::json> records;
  for (const auto& row : noise.rows) {
    nlohmann::json record{{"configuration", nlohmann::json::object()}};
    for (std::size_t column = 0; column < row.size(); ++column) {
      if (column < first_figure) {
        if (!row[column].is_null()) record["configuration"][noise.columns[column]] = row[column];
      } else {
        record[noise.columns[column]] = row[column];
      }
    }
    records.push_back(std::move(record));
  }
  return records;
}

Table calibrations_table(Database& database) {
  Table table{{"recorded_at",
               "sweep",
               "rounds",
               "night_runs",
               "hosts",
               "environments",
               "configuration",
               "nodes",
               "processes",
               "within_cv",
               "process_cv",
               "node_cv",
               "run_cv",
               "aa_pairs",
               "false_alarm_rate",
               "confirm_rate",
               "change_point_rate",
               "threshold_needed",
               "power_10pct",
               "note"},
              {}};
  auto select = database.prepare(
      "SELECT c.recorded_at, c.sweep_id, c.rounds, c.night_runs, c.hosts, c.environments, n.configuration, n.nodes, "
      "n.processes, n.within_cv, n.process_cv, n.node_cv, n.run_cv, n.aa_pairs, n.false_alarm_rate, n.confirm_rate, "
      "n.change_point_rate, "
      "n.threshold_needed, n.power_10pct, n.note FROM calibrations c JOIN calibration_noise n USING (sweep_id) "
      "ORDER BY c.recorded_at DESC, c.sweep_id, n.run_cv DESC");
  while (select.step()) {
    std::vector<nlohmann::json> row;
    for (int column = 0; column < static_cast<int>(table.columns.size()); ++column) {
      const auto& name = table.columns[static_cast<std::size_t>(column)];
      // Counts and texts as they are; the figures as numbers.
      auto value =
          name.ends_with("_cv") || name.ends_with("_rate") || name == "threshold_needed" || name == "power_10pct"
              ? (select.is_null(column) ? nlohmann::json(nullptr) : nlohmann::json(select.real(column)))
              : cell(select, column);
      if (name == "hosts" || name == "environments") {
        std::string joined;
        for (const auto& item : nlohmann::json::parse(value.get<std::string>()))
          joined += (joined.empty() ? "" : ", ") + item.get<std::string>();
        value = joined;
      } else if (name == "configuration") {
        value = label_of(nlohmann::json::parse(value.get<std::string>()), configuration_axes());
      }
      row.push_back(std::move(value));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace ts::readers
