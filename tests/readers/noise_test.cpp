// `query --noise`: each configuration's variance components from the
// stored epochs, and the regression rule's false alarms on A/A pairs.
#include "readers/noise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "readers/query.hpp"
#include "shared/errors.hpp"
#include "shared/statistics.hpp"
#include "shared/variance_components.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

using simulation::all_judged;
using simulation::make_result;
using simulation::SyntheticResult;

class Noise : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.add_sweep({"cal", "cal", nlohmann::json::object(), {}, "test", 0, "2026-12-04T00:00:00.000Z"}, {});
  }
  // One run (process) of `model` on `host` with these epoch times.
  void add_run(const std::string& model, const std::string& host, std::vector<double> epochs, int64_t batch_size = 64) {
    const auto job_id = "cal/" + std::to_string(next_++);
    store_.add_jobs("cal", {{job_id, next_, model, 0, "libtorch", 1, {}, 3, "measurement"}});
    SyntheticResult r;
    r.job_id = job_id;
    r.sweep = "cal";
    r.model = model;
    r.host = host;
    r.epoch_seconds = std::move(epochs);
    r.batch_size = batch_size;
    store_.ingest_results(all_judged({make_result(r)}), "agent");
  }
  Table table(std::size_t night_runs = 5) {
    NoiseOptions options;
    options.filter.sweeps = {"cal"};
    options.night_runs = night_runs;
    return noise_table(store_.database(), options);
  }
  static const nlohmann::json& cell(const Table& table, std::size_t row, const std::string& column) {
    return table.rows.at(row).at(column_of(table, column));
  }
  store::Store store_{":memory:"};
  int next_ = 0;
};

// The table's components are the estimator's on the same runs: hosts are
// nodes, runs processes, epochs values, on the log scale.
TEST_F(Noise, TheComponentsAreThoseOfTheStoredEpochsByHostAndRun) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> unit;
  std::vector<stats::ProcessSample> expected;
  for (int host = 0; host < 3; ++host) {
    const double node = 0.05 * unit(random);
    for (int run = 0; run < 4; ++run) {
      const double process = 0.03 * unit(random);
      std::vector<double> epochs;
      stats::ProcessSample sample{host, {}};
      for (int epoch = 0; epoch < 5; ++epoch) {
        epochs.push_back(std::exp(node + process + 0.01 * unit(random)));
        sample.values.push_back(std::log(epochs.back()));
      }
      add_run("mlp", "node-" + std::to_string(host), epochs);
      expected.push_back(std::move(sample));
    }
  }
  const auto components = stats::estimate_variance_components(expected);
  const auto noise = table();
  ASSERT_EQ(noise.rows.size(), 1u);
  EXPECT_EQ(cell(noise, 0, "nodes"), 3);
  EXPECT_EQ(cell(noise, 0, "processes"), 12);
  EXPECT_EQ(cell(noise, 0, "epochs"), 60);
  EXPECT_NEAR(cell(noise, 0, "within_cv").get<double>(), std::sqrt(*components.within), 1e-12);
  EXPECT_NEAR(cell(noise, 0, "process_cv").get<double>(), std::sqrt(*components.process), 1e-12);
  EXPECT_NEAR(cell(noise, 0, "node_cv").get<double>(), std::sqrt(*components.node), 1e-12);
  EXPECT_NEAR(cell(noise, 0, "run_cv").get<double>(), std::sqrt(components.variance_of_a_run_mean(5, false)), 1e-12);
  EXPECT_EQ(cell(noise, 0, "aa_pairs"), 1);  // 12 runs: one pair of 5 against 5
}

TEST_F(Noise, NoisiestFirstAndAnAaPairOfAShiftedNightIsAFalseAlarm) {
  // resnet18: steady; mlp: its second block of runs 20% slower (a noisy
  // node state that a night would report as a regression).
  for (int run = 0; run < 20; ++run) {
    add_run("resnet18", "node-a", {1.0 + 0.001 * run, 1.0 + 0.001 * run});
    const double slow = (run / 5 == 1) ? 1.2 : 1.0;
    add_run("mlp", "node-a", {slow + 0.001 * run, slow + 0.001 * run});
  }
  const auto noise = table();
  ASSERT_EQ(noise.rows.size(), 2u);
  EXPECT_EQ(cell(noise, 0, "model"), "mlp");
  EXPECT_EQ(cell(noise, 0, "aa_pairs"), 2);
  EXPECT_EQ(cell(noise, 0, "false_alarms"), 1);
  EXPECT_DOUBLE_EQ(cell(noise, 0, "false_alarm_rate").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(cell(noise, 0, "nominal_rate").get<double>(), 0.005);
  EXPECT_NE(cell(noise, 0, "note").get<std::string>().find("above the rule's nominal rate"), std::string::npos);
  EXPECT_EQ(cell(noise, 1, "false_alarms"), 0);
}

// Two sweeps may give one configuration different keys, or two
// configurations the same one (their axes differ, their fixed fields too):
// a configuration is what query names one.
TEST_F(Noise, ConfigurationsAreNamedByTheQueryAxesNotBySweepKeys) {
  for (int run = 0; run < 3; ++run) {
    add_run("mlp", "node-a", {1.0, 1.1}, 64);
    add_run("mlp", "node-a", {2.0, 2.1}, 32);
  }
  const auto noise = table();
  ASSERT_EQ(noise.rows.size(), 2u);
  EXPECT_EQ(cell(noise, 0, "processes"), 3);
  EXPECT_NE(cell(noise, 0, "batch_size"), cell(noise, 1, "batch_size"));
  EXPECT_THROW(column_of(noise, "seq_len"), std::out_of_range) << "a sequence axis no result has";
}

TEST_F(Noise, TooFewRunsForAPairSaySo) {
  for (int run = 0; run < 3; ++run) add_run("mlp", "node-a", {1.0, 1.1});
  const auto noise = table();
  EXPECT_EQ(cell(noise, 0, "aa_pairs"), 0);
  EXPECT_TRUE(cell(noise, 0, "false_alarm_rate").is_null());
  EXPECT_NE(cell(noise, 0, "note").get<std::string>().find("no A/A pair"), std::string::npos);
  EXPECT_THROW(table(1), InvalidInput);
}

// On A/A data the Mann-Whitney rule's false-alarm rate is within its
// nominal one: 5 runs against 5 flag only when fully separated, p = 2/252
// two-sided, so "regressed" (one side) has probability 1/252 < alpha / 2.
TEST(AaFalseAlarms, TheRulesMeasuredRateOnAaDataIsWithinItsNominalRate) {
  std::mt19937_64 random(11);
  std::normal_distribution<double> noise(1.0, 0.02);
  std::vector<double> runs(20000 * 10);
  for (auto& run : runs) run = noise(random);
  RegressionRule rule;
  rule.threshold = 0;  // the test alone
  const auto counted = aa_false_alarms(runs, rule, 5);
  ASSERT_EQ(counted.pairs, 20000u);
  const auto interval = stats::wilson_interval(counted.alarms, counted.pairs, 0.99);
  EXPECT_LE(interval.low, 1.0 / 252) << counted.alarms << " alarms";
  EXPECT_GE(interval.high, 1.0 / 252) << counted.alarms << " alarms";
  EXPECT_LE(interval.low, rule.alpha / 2);
  // With the default 5% threshold, 2% noise almost never moves a median by 5%.
  EXPECT_LT(aa_false_alarms(runs, RegressionRule{}, 5).alarms, counted.alarms);
}

// confirm's rule (docs/report.md) on A/A triples: on independent runs a
// confirmed alarm needs two regressed verdicts against one baseline, so it
// is rarer than the nightly rule's one; a shift that lasts over the night
// and its reruns (a node state that persists) is confirmed, and counted.
TEST(AaFalseAlarms, ConfirmsRuleOnIndependentRunsRarelyFiresAndAPersistentShiftIsCounted) {
  std::mt19937_64 random(17);
  std::normal_distribution<double> noise(1.0, 0.02);
  std::vector<double> runs(4000 * 15);
  for (auto& run : runs) run = noise(random);
  RegressionRule rule;
  rule.threshold = 0;
  const auto confirmed = confirm_false_alarms(runs, rule, 5);
  ASSERT_EQ(confirmed.pairs, 4000u);
  const auto nightly = aa_false_alarms(runs, rule, 5);
  EXPECT_LT(confirmed.alarms, nightly.alarms / 2) << confirmed.alarms << " against " << nightly.alarms;
  EXPECT_LE(stats::wilson_interval(confirmed.alarms, confirmed.pairs, 0.99).low, rule.alpha / 2);
  for (std::size_t i = 5; i < 15; ++i) runs[i] *= 1.2;  // the first triple's night and reruns
  EXPECT_EQ(confirm_false_alarms(runs, rule, 5).alarms, confirmed.alarms + 1);
  EXPECT_EQ(confirm_false_alarms({1.0, 1.0}, rule, 5).pairs, 0u);
}

// The report's change points on A/A histories: a flat history of nights
// (each the median of 5 runs scattered by 2%) rarely holds a step past the
// 5% threshold; a 20% step that persists is found.
TEST(AaFalseAlarms, ChangePointsOnAFlatHistoryAreRareAndAPersistentStepIsOne) {
  std::mt19937_64 random(19);
  std::normal_distribution<double> noise(1.0, 0.02);
  FalseAlarms total;
  for (int history = 0; history < 200; ++history) {
    std::vector<double> runs(12 * 5);
    for (auto& run : runs) run = noise(random);
    const auto counted = change_point_false_alarms(runs, RegressionRule{}, 5);
    EXPECT_EQ(counted.pairs, 11u);
    total.pairs += counted.pairs;
    total.alarms += counted.alarms;
  }
  EXPECT_LT(static_cast<double>(total.alarms) / static_cast<double>(total.pairs), 0.01) << total.alarms;
  std::vector<double> stepped(12 * 5);
  for (std::size_t i = 0; i < stepped.size(); ++i) stepped[i] = noise(random) * (i >= 30 ? 1.2 : 1.0);
  EXPECT_EQ(change_point_false_alarms(stepped, RegressionRule{}, 5).alarms, 1u);
  EXPECT_EQ(change_point_false_alarms(std::vector<double>(15, 1.0), RegressionRule{}, 5).pairs, 0u)
      << "3 nights: too short a history";
}

// The threshold a configuration's noise needs, and the power the table
// states, hold for nights drawn from the injected model: processes off by
// 3% (log scale), epochs by 1%, a run's figure the median of its 5 epochs.
TEST(AaFalseAlarms, APlantedSlowdownIsDetectedWithTheStatedPowerAtTheCalibratedThreshold) {
  std::mt19937_64 random(29);
  std::normal_distribution<double> unit;
  const auto night = [&](double slowdown) {
    Samples runs;
    for (int run = 0; run < 5; ++run) {
      const double process = 0.03 * unit(random);
      std::vector<double> epochs;
      for (int epoch = 0; epoch < 5; ++epoch)
        epochs.push_back((1 + slowdown) * std::exp(process + 0.01 * unit(random)));
      runs.push_back(stats::median(epochs));
    }
    return runs;
  };
  const double run_sd = std::sqrt(0.03 * 0.03 + 0.01 * 0.01 / 5);
  RegressionRule rule;
  rule.threshold = needed_threshold(run_sd * run_sd, 5, 5, rule);
  EXPECT_NEAR(rule.threshold, std::exp(2.5758 * std::sqrt(2 * run_sd * run_sd / 5)) - 1, 1e-4);
  for (const double slowdown : {0.05, 0.10}) {
    const double stated = detection_power(run_sd, 5, 5, slowdown, rule);
    constexpr std::size_t trials = 2000;
    std::size_t detected = 0;
    for (std::size_t trial = 0; trial < trials; ++trial) {
      const auto then = night(0), now = night(slowdown);
      if (judge_change(now, then, false, rule).verdict == "regressed") ++detected;
    }
    const auto observed = stats::wilson_interval(detected, trials, 0.99);
    // The stated power is of means; a run's figure is a median of epochs: 0.03 of slack.
    EXPECT_GE(stated, observed.low - 0.03) << slowdown << ": " << detected << " of " << trials;
    EXPECT_LE(stated, observed.high + 0.03) << slowdown << ": " << detected << " of " << trials;
  }
  // A/A at that threshold: the false-alarm rate stays within the nominal one.
  std::size_t alarms = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    if (judge_change(night(0), night(0), false, rule).verdict == "regressed") ++alarms;
  }
  EXPECT_LE(stats::wilson_interval(alarms, 2000, 0.99).low, rule.alpha / 2) << alarms;
  // A quiet configuration: a 10% slowdown is always seen, one at the 5% threshold half the time.
  EXPECT_GT(detection_power(0.001, 5, 5, 0.10, RegressionRule{}), 0.99);
  EXPECT_NEAR(detection_power(0.001, 5, 5, 0.05, RegressionRule{}), 0.5, 0.05);
}

// The calibrated threshold applied (docs/noise.md): a calibration sweep
// (tagged `calibration`) measured mlp's runs spreading by 10% and
// resnet18's by 0.5%; both are 12% slower tonight than last night, every
// run. The user's 5% calls both regressed; calibrated, mlp's threshold is
// what its noise needs for 5 runs against 5 (17.7%) and it is not called,
// resnet18 keeps 5% and is. A third model, never calibrated, keeps 5% and
// has no power figure. `--calibration ''` turns it off.
TEST(CalibratedThreshold, ACalibratedConfigurationIsJudgedAtTheThresholdItsNoiseNeeds) {
  store::Store store(":memory:");
  int next = 0;
  const auto add_sweep = [&](const std::string& id, std::vector<std::string> tags,
                             const std::vector<std::pair<std::string, double>>& runs) {
    std::vector<store::JobRecord> jobs;
    std::vector<nlohmann::json> results;
    for (const auto& [model, seconds] : runs) {
      const auto job_id = id + "/" + std::to_string(next++);
      jobs.push_back({job_id, next, model, 0, "libtorch", 1, {}, 3, "measurement"});
      SyntheticResult r;
      r.job_id = job_id;
      r.sweep = id;
      r.model = model;
      r.epoch_seconds = {seconds, seconds * 1.001, seconds * 0.999};
      results.push_back(make_result(r));
    }
    store.add_sweep({id, id, nlohmann::json::object(), std::move(tags), "test", 0, "2026-12-04T00:00:00.000Z"}, jobs);
    store.ingest_results(all_judged(results), "agent");
  };
  std::mt19937_64 random(33);
  std::normal_distribution<double> unit;
  std::vector<std::pair<std::string, double>> calibration, last_night, tonight;
  for (int run = 0; run < 40; ++run) {
    calibration.push_back({"mlp", std::exp(0.10 * unit(random))});
    calibration.push_back({"resnet18", std::exp(0.005 * unit(random))});
  }
  for (int run = 0; run < 5; ++run) {
    for (const std::string model : {"mlp", "resnet18", "transformer"}) {
      const double jitter = 1 + 0.001 * run;
      last_night.push_back({model, jitter});
      tonight.push_back({model, 1.12 * jitter});
    }
  }
  add_sweep("calibration-1", {"calibration"}, calibration);
  add_sweep("night-1", {}, last_night);
  add_sweep("night-2", {}, tonight);

  QueryOptions options;
  options.filter.sweeps = {"night-2"};
  options.group_by = {"model"};
  options.metrics = {"epoch_time"};
  options.baseline = "night-1";
  const auto judged = query(store.database(), options);
  const auto row = [&](const Table& table, const std::string& model) {
    for (const auto& r : table.rows)
      if (r[0] == model) return r;
    ADD_FAILURE() << model;
    return std::vector<nlohmann::json>{};
  };
  const auto expected_sd = [&] {
    const auto calibrated = calibrated_configurations(store.database(), "calibration");
    EXPECT_EQ(calibrated.size(), 2u);
    return calibrated_spread(calibrated, {"model"}, {"mlp"}).value_or(0);
  }();
  EXPECT_NEAR(expected_sd, 0.10, 0.03);
  const auto at = [&](const Table& table, const std::string& model, const std::string& column) {
    return row(table, model)[column_of(table, column)];
  };
  EXPECT_EQ(at(judged, "mlp", "verdict"), "same");
  EXPECT_NEAR(at(judged, "mlp", "threshold").get<double>(),
              needed_threshold(expected_sd * expected_sd, 5, 5, options.regression), 1e-12);
  EXPECT_GT(at(judged, "mlp", "threshold").get<double>(), 0.12);
  EXPECT_LT(at(judged, "mlp", "power_10pct").get<double>(), 0.5) << "10% is below what mlp's noise lets through";
  EXPECT_EQ(at(judged, "resnet18", "verdict"), "regressed");
  EXPECT_DOUBLE_EQ(at(judged, "resnet18", "threshold").get<double>(), 0.05);
  EXPECT_GT(at(judged, "resnet18", "power_10pct").get<double>(), 0.99);
  EXPECT_EQ(at(judged, "transformer", "verdict"), "regressed");
  EXPECT_DOUBLE_EQ(at(judged, "transformer", "threshold").get<double>(), 0.05);
  EXPECT_TRUE(at(judged, "transformer", "power_10pct").is_null());

  options.regression.calibration_tag.clear();
  const auto plain = query(store.database(), options);
  EXPECT_EQ(at(plain, "mlp", "verdict"), "regressed");
  EXPECT_DOUBLE_EQ(at(plain, "mlp", "threshold").get<double>(), 0.05);
}

}  // namespace
}  // namespace ts::readers
