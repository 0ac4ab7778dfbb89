#include "readers/noise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>

#include "shared/errors.hpp"
#include "shared/statistics.hpp"
#include "shared/variance_components.hpp"

namespace ts::readers {
namespace {

struct Configuration {
  std::string key;                   // the configuration axes' values, as a JSON array
  std::vector<nlohmann::json> axes;  // the same, one cell an axis
  std::vector<stats::ProcessSample> processes;
  std::vector<double> seconds;
  std::vector<double> run_medians;  // each run's median epoch, in the order the runs arrived
};

// The standard deviation on the log scale: a relative spread.
nlohmann::json spread(const std::optional<double>& variance) {
  return variance ? nlohmann::json(std::sqrt(*variance)) : nlohmann::json(nullptr);
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
                                 ", r.host, r.job_id, r.attempt, e.seconds FROM results r JOIN result_epochs e "
                                 "ON e.job_id = r.job_id AND e.attempt = r.attempt WHERE " +
                                 condition.sql + " AND e.seconds > 0 ORDER BY 1, r.host, r.job_id, r.attempt, e.epoch");
  bind_condition(select, condition);
  auto runs = database.prepare("SELECT " + key + ", r.median_epoch_s FROM results r WHERE " + condition.sql +
                               " AND r.median_epoch_s > 0 ORDER BY 1, r.received_at, r.rowid");
  bind_condition(runs, condition);
  std::map<std::string, std::vector<double>> run_medians;
  while (runs.step()) run_medians[runs.text(0)].push_back(runs.real(1));
  std::vector<Configuration> found;
  std::map<std::string, int> nodes;  // a configuration's hosts, numbered
  std::string last_process;
  while (select.step()) {
    const auto configuration_key = select.text(0), host = select.text(1);
    const auto process = select.text(2) + "/" + std::to_string(select.integer(3));
    if (found.empty() || found.back().key != configuration_key) {
      const auto values = nlohmann::json::parse(configuration_key);
      found.push_back({configuration_key, {values.begin(), values.end()}, {}, {}, {}});
      nodes.clear();
      last_process.clear();
    }
    auto& configuration = found.back();
    if (process != last_process) {
      const auto node = nodes.try_emplace(host, static_cast<int>(nodes.size())).first->second;
      configuration.processes.push_back({node, {}});
      last_process = process;
    }
    const double seconds = select.real(4);
    configuration.processes.back().values.push_back(std::log(seconds));
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

double needed_threshold(double run_variance, std::size_t k, const RegressionRule& rule) {
  return std::exp(stats::two_sided_z(1 - rule.alpha) * std::sqrt(2 * run_variance / static_cast<double>(k))) - 1;
}

double detection_power(double run_sd, std::size_t k, double slowdown, const RegressionRule& rule) {
  std::mt19937_64 random(20261204);
  std::normal_distribution<double> unit;
  constexpr int trials = 2000;
  int detected = 0;
  Samples then(k), now(k);
  for (int trial = 0; trial < trials; ++trial) {
    for (auto& run : then) run = std::exp(run_sd * unit(random));
    for (auto& run : now) run = (1 + slowdown) * std::exp(run_sd * unit(random));
    if (judge_change(now, then, false, rule).verdict == "regressed") ++detected;
  }
  return static_cast<double>(detected) / trials;
}

Table noise_table(Database& database, const NoiseOptions& options) {
  if (options.night_runs < 2) throw InvalidInput("--night-runs", "at least 2 runs a night");
  Table table{configuration_axes(), {}};
  for (const char* column : {"nodes", "processes", "epochs", "median_epoch_s", "within_cv", "process_cv", "node_cv",
                             "run_cv", "aa_pairs", "false_alarms", "false_alarm_rate", "rate_low", "rate_high",
                             "nominal_rate", "threshold_needed", "power_10pct", "note"}) {
    table.columns.push_back(column);
  }
  // "regressed" is one side of a two-sided test at alpha.
  const double nominal = options.rule.alpha / 2;
  std::vector<std::pair<double, std::vector<nlohmann::json>>> rows;
  for (auto& configuration : configurations(database, options.filter)) {
    const auto components = stats::estimate_variance_components(configuration.processes);
    const int per_process = components.values / components.processes;
    const double run = std::sqrt(components.variance_of_a_run_mean(per_process, false));
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
    // The threshold in force: the user's, or what this noise requires if more.
    const double needed = needed_threshold(run * run, options.night_runs, options.rule);
    auto rule = options.rule;
    if (needed > rule.threshold) {
      add_note(fmt::format("its noise needs --threshold {:.3f}", needed));
      rule.threshold = needed;
    }
    const double power = detection_power(run, options.night_runs, 0.10, rule);
    auto row = configuration.axes;
    for (nlohmann::json cell :
         {nlohmann::json(components.nodes), nlohmann::json(components.processes), nlohmann::json(components.values),
          nlohmann::json(stats::median(configuration.seconds)), spread(components.within), spread(components.process),
          spread(components.node), nlohmann::json(run), nlohmann::json(alarms.pairs), nlohmann::json(alarms.alarms),
          rate, low, high, nlohmann::json(nominal), nlohmann::json(needed), nlohmann::json(power),
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

}  // namespace ts::readers
