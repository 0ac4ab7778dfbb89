#include "readers/query.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "agent/judge/timing_summary.hpp"
#include "cli/table_renderer.hpp"
#include "readers/eager_partners.hpp"
#include "readers/export.hpp"
#include "readers/report.hpp"
#include "shared/errors.hpp"
#include "shared/timestamp.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"
#include "tests/readers/query_store.hpp"

namespace ts::readers {
namespace {

using namespace store;  // the records the tests write
using query_fixture::QueryStore;

using simulation::all_judged;
using simulation::make_result;
using simulation::SyntheticResult;

TEST_F(QueryStore, GroupsPoolRunsAcrossSweepsWithMedians) {
  QueryOptions options;
  options.group_by = {"model", "mode"};
  options.metrics = {"epoch_time", "peak_memory"};
  const auto table = run(options);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"model", "mode", "runs", "flagged", "inaccurate", "busy",
                                                     "epoch_time_s", "peak_memory_mib"}));
  ASSERT_EQ(table.rows.size(), 4u);
  const auto mlp_eager = row(table, {{"model", "mlp"}, {"mode", "eager"}});
  EXPECT_EQ(mlp_eager[2], 12);
  EXPECT_EQ(mlp_eager[3], 0);
  EXPECT_EQ(mlp_eager[4], 0);
  EXPECT_EQ(mlp_eager[5], 0);
  // 12 runs: 1.00..1.05 twice; the median of the middle pair (1.02, 1.03).
  EXPECT_NEAR(mlp_eager[6].get<double>(), 1.025, 1e-9);
  EXPECT_NEAR(mlp_eager[7].get<double>(), 1000.0, 1e-9);
}

// The agent's condition section (docs/noise.md): busy runs are counted in the
// table and can be filtered out by the `condition` axis; results without the
// section (stored before it) are neither.
TEST_F(QueryStore, RunsTakenOnABusyNodeAreCountedAndCanBeLeftOut) {
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int run = 0; run < 4; ++run) {
    const auto job_id = "night-4/" + std::to_string(run);
    jobs.push_back({job_id, run, "mlp", run, "libtorch", 1, {}, 3});
    SyntheticResult r;
    r.job_id = job_id;
    r.model = "mlp";
    r.epoch_seconds = {run == 0 ? 2.0 : 1.0};
    auto result = make_result(r);
    if (run < 3) {
      const bool busy = run == 0;
      result["context"]["condition"] = {
          {"window_seconds", 3.0},
          {"cpus", 2},
          {"governor", "performance"},
          {"boost", false},
          {"smt", nullptr},
          {"load_1m", 1.5},
          {"other_cpu_share", busy ? 0.8 : 0.01},
          {"steal_share", 0.0},
          {"cpu_pressure_share", nullptr},
          {"memory_pressure_share", nullptr},
          {"memory_available_bytes", nullptr},
          {"judged", true},
          {"busy", busy},
          {"busy_reasons", busy ? nlohmann::json::array({"other processes used 80% of the 2 CPUs' time (limit 10%)"})
                                : nlohmann::json::array()}};
    }
    results.push_back(std::move(result));
  }
  store_.add_sweep({"night-4", "busy", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");

  QueryOptions options;
  options.filter.sweeps = {"night-4"};
  options.group_by = {"model"};
  options.metrics = {"epoch_time"};
  const auto all = run(options);
  ASSERT_EQ(all.rows.size(), 1u);
  EXPECT_EQ(all.rows[0][column(all, "runs")], 4);
  EXPECT_EQ(all.rows[0][column(all, "busy")], 1);
  options.filter.where = {{"condition", "quiet"}};
  const auto quiet = run(options);
  EXPECT_EQ(quiet.rows[0][column(quiet, "runs")], 2);
  EXPECT_EQ(quiet.rows[0][column(quiet, "busy")], 0);
  options.filter.where = {{"condition", "unknown"}};
  EXPECT_EQ(run(options).rows[0][column(all, "runs")], 1);
}

TEST_F(QueryStore, RunsFailingTheAccuracyGateAreFilteredCountedAndDoNotPassTheSuite) {
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int run = 0; run < 3; ++run) {
    for (const std::string mode : {"eager", "compiled"}) {
      const auto job_id = "night-3/" + mode + std::to_string(run);
      jobs.push_back({job_id, static_cast<int64_t>(jobs.size()), "mlp" + mode, run, "libtorch", 1, {}, 3});
      SyntheticResult r;
      r.job_id = job_id;
      r.model = "mlp";
      r.mode = mode;
      r.epoch_seconds = {mode == "eager" ? 1.0 : 0.5};
      auto result = make_result(r);
      if (mode == "compiled") {  // the gate failed the first two compiled runs
        const bool failed = run < 2;
        result["accuracy"] = {{"reference", "float64"},
                              {"reference_note", nullptr},
                              {"tensors", nlohmann::json::array()},
                              {"status", failed ? "fail" : "pass"},
                              {"deviation", failed ? 3.0 : 0.2},
                              {"tolerance", 1e-4},
                              {"worst", "loss"},
                              {"failed", nlohmann::json::array()}};
      }
      results.push_back(std::move(result));
    }
  }
  store_.add_sweep({"night-3", "gated", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");

  QueryOptions options;
  options.filter.sweeps = {"night-3"};
  options.group_by = {"model", "mode"};
  options.metrics = {"epoch_time", "accuracy_deviation"};
  const auto plain = run(options);
  const auto compiled = row(plain, {{"mode", "compiled"}});
  EXPECT_EQ(compiled[column(plain, "inaccurate")], 2);
  EXPECT_NEAR(compiled[column(plain, "accuracy_deviation")].get<double>(), 3.0, 1e-12);
  EXPECT_TRUE(row(plain, {{"mode", "eager"}})[column(plain, "accuracy_deviation")].is_null());

  options.filter.where = {{"accuracy", "fail"}};
  EXPECT_EQ(row(run(options), {{"mode", "compiled"}})[column(plain, "runs")], 2);
  options.filter.where = {{"accuracy", "none"}};
  EXPECT_EQ(run(options).rows.size(), 1u);  // the eager runs: no gate

  options.filter.where.clear();
  options.group_by = {"model"};
  options.compare = "mode";
  const auto compared = run(options);
  ASSERT_EQ(compared.rows.size(), 1u);
  EXPECT_EQ(compared.rows[0][column(compared, "inaccurate")], 2);
  const auto suite = suite_summary(store_.database(), options, {"runner"});
  ASSERT_EQ(suite.rows.size(), 1u);
  EXPECT_EQ(suite.rows[0][column(suite, "passed")], 0);  // fast and wrong does not pass
  EXPECT_EQ(suite.rows[0][column(suite, "inaccurate")], 1);
}

TEST_F(QueryStore, AFirstEpochFarAboveTheOthersFlagsInsufficientWarmup) {
  std::vector<nlohmann::json> results;
  std::vector<JobRecord> jobs;
  for (const auto& [id, epochs] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"w/0", {1.6, 1.0, 1.0}}, {"w/1", {1.4, 1.0, 1.0}}, {"w/2", {1.0}}}) {
    jobs.push_back({id, static_cast<int64_t>(jobs.size()), "c", 0, "libtorch", 1, {}, 3});
    SyntheticResult r;
    r.job_id = id;
    r.epoch_seconds = epochs;
    // The agent's warm-up judgement, as an agent sends it; the fixture's
    // other figures (not noisy) stay as chosen.
    auto document = make_result(r);
    auto judged = document;
    agent::summarize_timing(judged);
    document["timing"]["warmup_insufficient"] = judged.at("timing").at("warmup_insufficient");
    results.push_back(document);
  }
  store_.add_sweep({"w", "warm", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");
  auto flags =
      store_.database().prepare("SELECT job_id, warmup_insufficient FROM results WHERE sweep_id = 'w' ORDER BY job_id");
  std::vector<std::string> seen;
  while (flags.step()) seen.push_back(flags.text(0) + "=" + (flags.is_null(1) ? "null" : flags.text(1)));
  EXPECT_EQ(seen, (std::vector<std::string>{"w/0=1", "w/1=0", "w/2=null"}));  // over 1.5x; under; one epoch
  QueryOptions options;
  options.filter.sweeps = {"w"};
  const auto table = run(options);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][column(table, "flagged")], 1);
}

TEST_F(QueryStore, SweepFilterResolvesIdsAndNewestByName) {
  QueryOptions options;
  options.group_by = {"sweep"};
  options.filter.sweeps = {"nightly"};
  auto table = run(options);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][0], "night-2");
  options.filter.sweeps = {"night-1"};
  EXPECT_EQ(run(options).rows.at(0)[0], "night-1");
  options.filter.sweeps = {"no-such"};
  EXPECT_THROW(run(options), InvalidInput);
}

TEST_F(QueryStore, WhereTagAndSinceFilter) {
  QueryOptions options;
  options.group_by = {"model"};
  options.filter.where = {{"mode", "compiled"}, {"batch_size", "64"}};
  options.filter.tags = {"nightly"};
  auto table = run(options);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][1], 12);
  options.filter.tags = {"weekly"};
  EXPECT_TRUE(run(options).rows.empty());
  options.filter.tags.clear();
  options.filter.since = "2999-01-01";
  EXPECT_TRUE(run(options).rows.empty());
  options.filter.since = "2026-01-01T00:00Z";
  EXPECT_EQ(run(options).rows.size(), 2u);
}

TEST_F(QueryStore, SinceAndUntilCompareInstantsAtTheBoundarySecond) {
  // Every result of night-1 arrives at 18:00:30 UTC, night-2's a day later.
  store_.database().execute(
      "UPDATE results SET received_at = CASE sweep_id WHEN 'night-1' THEN '2026-11-28T18:00:30.000Z' "
      "ELSE '2026-11-29T18:00:30.000Z' END");
  const auto runs = [&](const std::string& since, const std::string& until) {
    QueryOptions options;
    options.group_by = {"sweep"};
    options.filter.since = since;
    options.filter.until = until;
    int64_t total = 0;
    for (const auto& r : run(options).rows) total += r[column(run(options), "runs")].get<int64_t>();
    return total;
  };
  EXPECT_EQ(runs("2026-11-28T18:00Z", ""), 48);         // ':' sorts before 'Z': compared as text this dropped night-1
  EXPECT_EQ(runs("2026-11-28T18:00:30Z", ""), 48);      // --since is inclusive
  EXPECT_EQ(runs("2026-11-28T18:00:30.001Z", ""), 24);  // a millisecond later: night-2 only
  EXPECT_EQ(runs("", "2026-11-28T18:00:30Z"), 0);       // --until is exclusive
  EXPECT_EQ(runs("", "2026-11-28T18:00:31"), 24);       // no zone: UTC
  EXPECT_EQ(runs("2026-11-28T19:00:30+01:00", "2026-11-29"), 24);  // 18:00:30 UTC, in another zone
  EXPECT_EQ(runs("2026-11-28 18:00:30.0004", "2026-11-30"), 48);   // beyond milliseconds: cut
}

TEST(UtcInstant, EveryDocumentedFormNamesOneInstant) {
  EXPECT_EQ(utc_instant("2026-11-30", "--since"), "2026-11-30T00:00:00.000Z");
  EXPECT_EQ(utc_instant("2026-11-30T18:00Z", "--since"), "2026-11-30T18:00:00.000Z");
  EXPECT_EQ(utc_instant("2026-11-30T18:00:30.5", "--since"), "2026-11-30T18:00:30.500Z");
  EXPECT_EQ(utc_instant("2026-12-01T00:30:00+01:00", "--since"), "2026-11-30T23:30:00.000Z");
  EXPECT_EQ(utc_instant("2026-11-30T23:30-01:00", "--since"), "2026-12-01T00:30:00.000Z");
  for (const char* bad : {"yesterday", "2026-13-01", "2026-02-30", "2026-11-30T24:00", "2026-11-30T18", "18:00"}) {
    EXPECT_THROW(utc_instant(bad, "--until"), InvalidInput) << bad;
  }
}

TEST_F(QueryStore, BadAxesMetricsAndFiltersNameTheOption) {
  const auto field_of = [&](QueryOptions options) {
    try {
      run(options);
    } catch (const InvalidInput& error) {
      return error.field();
    }
    return std::string("<no error>");
  };
  QueryOptions bad_group;
  bad_group.group_by = {"modle"};
  EXPECT_EQ(field_of(bad_group), "--group-by");
  QueryOptions bad_where;
  bad_where.filter.where = {{"model; DROP TABLE results", "x"}};
  EXPECT_EQ(field_of(bad_where), "--where");
  QueryOptions bad_metric;
  bad_metric.metrics = {"speed"};
  EXPECT_EQ(field_of(bad_metric), "--metric");
  QueryOptions bad_since;
  bad_since.filter.since = "yesterday";
  EXPECT_EQ(field_of(bad_since), "--since");
  QueryOptions bad_until;
  bad_until.filter.until = "2026-11-30T25:00";
  EXPECT_EQ(field_of(bad_until), "--until");
  QueryOptions bad_compare;
  bad_compare.compare = "mode=eager";
  EXPECT_EQ(field_of(bad_compare), "--compare");
  QueryOptions ambiguous;
  ambiguous.compare = "model=mlp,resnet50";
  ambiguous.baseline = "night-1";
  EXPECT_EQ(field_of(ambiguous), "--compare");
}

TEST_F(QueryStore, ValuesAreBoundNeverPasted) {
  QueryOptions options;
  options.filter.where = {{"model", "x' OR '1'='1"}};
  EXPECT_TRUE(run(options).rows.empty());
  auto count = store_.database().prepare("SELECT COUNT(*) FROM results");
  count.step();
  EXPECT_EQ(count.integer(0), 48);
}

// The MLflow export's pairs (readers/eager_partners.hpp): each compiled run
// with the eager run of its sweep, configuration and repeat.
TEST_F(QueryStore, EachCompiledRunHasTheEagerRunOfItsSweepConfigurationAndRepeat) {
  ResultFilter filter;
  filter.sweeps = {"night-1"};
  filter.where = {{"mode", "compiled"}};  // the partners need not pass the filter
  const auto partners = eager_partners(store_.database(), filter);
  ASSERT_EQ(partners.size(), 12u);  // 2 models x 6 repeats
  auto repeat_of = [&](const std::string& job_id) {
    auto select = store_.database().prepare("SELECT repeat FROM jobs WHERE job_id = ?");
    select.bind_all(job_id);
    EXPECT_TRUE(select.step());
    return select.integer(0);
  };
  for (const auto& [compiled, partner] : partners) {
    EXPECT_TRUE(compiled.first.starts_with("night-1/")) << compiled.first;
    EXPECT_TRUE(partner.eager.first.starts_with("night-1/")) << partner.eager.first;
    EXPECT_EQ(repeat_of(compiled.first), repeat_of(partner.eager.first));
    ASSERT_TRUE(partner.speedup);
    // Eager and compiled times of a repeat scale alike: the ratio is the models' base ratio.
    const bool mlp = std::stoi(compiled.first.substr(8)) < 12;
    EXPECT_NEAR(*partner.speedup, mlp ? 2.0 : 2.0 / 1.6, 1e-9) << compiled.first;
  }
  filter.where = {{"mode", "eager"}};
  EXPECT_TRUE(eager_partners(store_.database(), filter).empty());  // an eager run has no partner
}

TEST_F(QueryStore, UtilisationAndAchievedFlopsAreMetrics) {
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int ordinal = 0; ordinal < 3; ++ordinal) {
    const auto job_id = "mfu/" + std::to_string(ordinal);
    jobs.push_back({job_id, ordinal, "k", ordinal, "libtorch", 1, {}, 3});
    SyntheticResult r;
    r.job_id = job_id;
    auto document = make_result(r);
    const double achieved = 1e12 * (ordinal + 1);
    document["efficiency"] = {{"convention", "matmul_conv_2flops_per_mac_train_3x_forward"},
                              {"forward_flops_per_sample", 1e9},
                              {"flops_per_step", 1.92e11},
                              {"achieved_flops_per_s", achieved},
                              {"peak_flops_per_s", 1e13},
                              {"peak_dtype", "fp32"},
                              {"mfu", achieved / 1e13}};
    results.push_back(document);
  }
  store_.add_sweep({"mfu", "mfu", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");
  QueryOptions options;
  options.filter.sweeps = {"mfu"};
  options.metrics = {"mfu", "achieved_flops"};
  const auto table = run(options);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_NEAR(table.rows[0][column(table, "mfu")].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(table.rows[0][column(table, "achieved_tflops_per_s")].get<double>(), 2.0, 1e-12);
  const auto exported = export_table(store_.database(), options.filter, "results");
  EXPECT_NEAR(exported.rows[0][column(exported, "flops_per_step")].get<double>(), 1.92e11, 1);
}

TEST_F(QueryStore, AdaptiveStopsSayWhichPairsStoppedWhy) {
  store_.add_sweep({"adaptive", "adaptive", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, {});
  store_.record_adaptive_pair("adaptive", R"({"model":"mlp"})", 3, 0.01, std::nullopt, "converged");
  store_.record_adaptive_pair("adaptive", R"({"model":"resnet50"})", 20, 0.05, std::nullopt, "max_reached");
  store_.record_adaptive_pair("adaptive", R"({"model":"vit"})", 9, 0.03, 0.93, "converged");  // until.power
  ResultFilter filter;
  filter.sweeps = {"adaptive"};
  const auto table = adaptive_stops(store_.database(), filter);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0][column(table, "configuration")], R"({"model":"mlp"})");
  EXPECT_EQ(table.rows[0][column(table, "state")], "converged");
  EXPECT_TRUE(table.rows[0][column(table, "power")].is_null());
  EXPECT_EQ(table.rows[1][column(table, "rounds")], 20);
  EXPECT_NE(table.rows[1][column(table, "why")].get<std::string>().find("maximum"), std::string::npos);
  EXPECT_DOUBLE_EQ(table.rows[2][column(table, "power")].get<double>(), 0.93);
  EXPECT_NE(table.rows[2][column(table, "why")].get<std::string>().find("power"), std::string::npos);
  EXPECT_EQ(adaptive_stops(store_.database(), {}).rows.size(), 3u);  // every sweep
}

TEST_F(QueryStore, BaselineFlagsOnlyTheRegressionBeyondNoise) {
  QueryOptions options;
  options.filter.sweeps = {"night-2"};
  options.baseline = "nightly";  // the tag: its newest sweep other than night-2
  options.group_by = {"model", "mode"};
  options.metrics = {"epoch_time"};
  const auto table = run(options);
  ASSERT_EQ(table.rows.size(), 4u);
  const auto verdict = column(table, "verdict");
  EXPECT_EQ(row(table, {{"model", "resnet50"}, {"mode", "compiled"}})[verdict], "regressed");
  EXPECT_NEAR(
      row(table, {{"model", "resnet50"}, {"mode", "compiled"}})[column(table, "epoch_time_change")].get<double>(), 0.2,
      1e-9);
  EXPECT_EQ(row(table, {{"model", "resnet50"}, {"mode", "eager"}})[verdict], "same");
  EXPECT_EQ(row(table, {{"model", "mlp"}, {"mode", "compiled"}})[verdict], "same");
  // Judged the other way round, the same change is an improvement.
  options.filter.sweeps = {"night-1"};
  options.baseline = "night-2";
  EXPECT_EQ(row(run(options), {{"model", "resnet50"}, {"mode", "compiled"}})[verdict], "improved");
}

TEST_F(QueryStore, ScalingEfficiencyComparesEachRankCountWithOneRank) {
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  int ordinal = 0;
  // Global throughput 1x, 1.8x and 3x the one-rank figure: efficiency 1, 0.9, 0.75.
  for (const auto& [ranks, speedup] : std::vector<std::pair<int64_t, double>>{{1, 1.0}, {2, 1.8}, {4, 3.0}}) {
    for (int run = 0; run < 6; ++run) {
      const auto job_id = "scaling/" + std::to_string(ordinal);
      jobs.push_back({job_id, ordinal++, "mlp" + std::to_string(ranks), run, "libtorch", ranks, {}, 3});
      SyntheticResult r;
      r.job_id = job_id;
      r.model = "mlp";
      r.gpus = ranks;
      const double t = static_cast<double>(ranks) / speedup * (1.0 + 0.01 * run);
      r.epoch_seconds = {t, t, t};
      results.push_back(make_result(r));
    }
  }
  store_.add_sweep({"scaling", "scaling", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");

  QueryOptions options;
  options.filter.sweeps = {"scaling"};
  const auto table = run(options);
  const auto efficiency = column(table, "scaling_efficiency");
  EXPECT_NEAR(row(table, {{"gpus", 1}})[efficiency].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(row(table, {{"gpus", 2}})[efficiency].get<double>(), 0.9, 1e-9);
  const auto four = row(table, {{"gpus", 4}});
  EXPECT_NEAR(four[efficiency].get<double>(), 0.75, 1e-9);
  EXPECT_LE(four[efficiency + 1].get<double>(), 0.75);
  EXPECT_GE(four[efficiency + 2].get<double>(), 0.75);
  EXPECT_NE(cli::render(table, cli::Format::table).find("scaling_efficiency [95% CI]"), std::string::npos);

  // Without several rank counts there is nothing to scale: no column.
  options.filter.sweeps = {"night-1"};
  const auto single = run(options);
  EXPECT_EQ(std::find(single.columns.begin(), single.columns.end(), "scaling_efficiency"), single.columns.end());
}

TEST_F(QueryStore, ExportIsOneFlatRowPerResult) {
  ResultFilter filter;
  filter.sweeps = {"night-1"};
  const auto table = export_table(store_.database(), filter, "results");
  EXPECT_EQ(table.rows.size(), 24u);
  EXPECT_EQ(table.columns.front(), "job_id");
  const auto csv = cli::render(table, cli::Format::csv);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 25);
  const auto json = nlohmann::json::parse(cli::render(table, cli::Format::json));
  EXPECT_EQ(json.size(), 24u);
  EXPECT_EQ(json[0].at("sweep_id"), "night-1");
}

TEST_F(QueryStore, ExportedStepsAreEveryTimedStepOfTheFilteredResultsWithTheirKey) {
  ResultFilter filter;
  filter.sweeps = {"night-1"};
  filter.where = {{"model", "mlp"}};
  const auto results = export_table(store_.database(), filter, "results");
  const auto steps = export_table(store_.database(), filter, "steps");
  ASSERT_FALSE(results.rows.empty());
  EXPECT_EQ(steps.columns, (std::vector<std::string>{"job_id", "attempt", "epoch", "step", "seconds"}));
  std::map<std::string, int> per_job;
  for (const auto& row : steps.rows) ++per_job[row[0].get<std::string>()];
  EXPECT_EQ(per_job.size(), results.rows.size());  // only the filtered results' steps
  for (const auto& row : results.rows) EXPECT_EQ(per_job[row[0].get<std::string>()], 3 * 10) << row[0];
  EXPECT_TRUE(steps.rows[0][4].is_number_float());
  // Every column the contract names, typed as it says.
  const std::string results_table = "results";  // named: GCC 14 takes a temporary's reference for a dangling one
  for (const auto& column : export_columns(results_table)) {
    EXPECT_NE(std::find(results.columns.begin(), results.columns.end(), column.name), results.columns.end());
  }
  EXPECT_TRUE(results.rows[0][column(results, "noisy")].is_number_integer());
  EXPECT_TRUE(results.rows[0][column(results, "received_at")].is_string());
}

// A runner of another framework has no torch version (context.torch_version
// null): the report's environment names its framework instead, and the
// report is written. It failed with a JSON type error before.
TEST_F(QueryStore, TheReportNamesTheFrameworkOfARunnerWithoutTorch) {
  SyntheticResult r;
  r.job_id = "tf-night/0";
  r.sweep = "tf-night";
  r.model = "mlp";
  r.epoch_seconds = {1.0, 1.0, 1.0};
  auto result = make_result(r);
  result["runner"] = {{"name", "tensorflow"}, {"version", "2.21.0"}};
  result["job"]["runner"] = "tensorflow";
  result["context"]["torch_version"] = nullptr;
  result["context"]["framework"] = {{"name", "tensorflow"}, {"version", "2.21.0"}};
  store_.add_sweep({"tf-night", "tf-night", nlohmann::json::object(), {"tf"}, "test", 0, "2026-11-30T00:00:00.000Z"},
                   {{"tf-night/0", 0, "mlp", 0, "tensorflow", 1, {}, 3}});
  store_.ingest_results(all_judged({result}), "agent");
  ReportOptions options;
  options.filter.sweeps = {"tf-night"};
  const auto data = report_data(store_.database(), options);
  ASSERT_EQ(data.at("environments").size(), 1u) << data.at("environments").dump();
  EXPECT_EQ(data.at("environments").at(0).at("framework"), "tensorflow 2.21.0");
  EXPECT_EQ(data.at("environments").at(0).at("torch"), nullptr);
}

TEST(QueryRender, CsvQuotesAndTableAlignsAndFactorsOutConstants) {
  const Table table{{"name", "value", "speedup", "speedup_low", "speedup_high"},
                    {{"a,b", 1.5, 2.0, 1.5, 2.5}, {"same \"quoted\"", 1.5, 1.0, 0.9, 1.1}}};
  EXPECT_EQ(
      cli::render(table, cli::Format::csv),
      "name,value,speedup,speedup_low,speedup_high\n\"a,b\",1.5,2,1.5,2.5\n\"same \"\"quoted\"\"\",1.5,1,0.9,1.1\n");
  const auto text = cli::render(table, cli::Format::table);
  EXPECT_NE(text.find("speedup [95% CI]"), std::string::npos) << text;
  EXPECT_NE(text.find("2 [1.5, 2.5]"), std::string::npos) << text;
  EXPECT_THROW(cli::parse_format("xml", "--format"), InvalidInput);
}

TEST(QueryRender, AWideTableFitsTheTerminalInBlocksThatRepeatTheRowNames) {
  Table table{{"model", "mode", "device_name", "runner"},
              {{"resnet18", "eager", "AMD EPYC 7B13 64-Core Processor", "libtorch"},
               {"mlp", "compiled", "AMD EPYC 7B13 64-Core Processor", "libtorch"}}};
  for (int knob = 0; knob < 6; ++knob) {
    table.columns.push_back("constant_knob_" + std::to_string(knob));
    for (auto& row : table.rows) row.push_back("value_" + std::to_string(knob));
  }
  for (int metric = 0; metric < 12; ++metric) {
    table.columns.push_back("metric_number_" + std::to_string(metric));
    for (auto& row : table.rows) row.push_back(1234.5678 + metric);
  }
  const auto unlimited = cli::render(table, cli::Format::table);
  ASSERT_GT(unlimited.find('\n'), 80u);  // one header line wider than the terminal
  const auto fitted = cli::render(table, cli::Format::table, 80);
  std::size_t blocks = 0;
  std::istringstream lines(fitted);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 80u) << line;
    if (line.starts_with("model")) ++blocks;
  }
  EXPECT_GT(blocks, 1u) << fitted;
  EXPECT_NE(fitted.find("constant_knob_5=value_5)"), std::string::npos) << fitted;  // the caption, broken
  for (const auto& column : table.columns) EXPECT_NE(fitted.find(column), std::string::npos) << column;
  // Every block names each row: "compiled" once per block.
  std::size_t named = 0;
  for (auto at = fitted.find("compiled"); at != std::string::npos; at = fitted.find("compiled", at + 1)) ++named;
  EXPECT_EQ(named, blocks);
}

TEST(StoreJobs, StatesMoveAndASweepClosesWhenItsLastJobEnds) {
  Store store(":memory:");
  store.add_sweep({"s1", "demo", nlohmann::json::object(), {}, "me", 0, "2026-11-30T00:00:00.000Z"},
                  {{"s1/0", 0, "a", 0, "libtorch", 1, nlohmann::json::object(), 2},
                   {"s1/1", 1, "b", 0, "libtorch", 1, nlohmann::json::object(), 2}});
  EXPECT_EQ(store.unfinished_jobs().size(), 2u);
  store.job_started("s1/0", 1, "agent-a");
  EXPECT_EQ(store.job("s1/0")->state, "running");
  EXPECT_EQ(store.job("s1/0")->attempts, 1);
  store.job_requeued("s1/0", "agent lost", 1);
  EXPECT_EQ(store.job("s1/0")->state, "queued");
  store.job_finished("s1/0", "done");
  EXPECT_EQ(store.sweeps("s1").at(0).state, "active");
  store.job_finished("s1/1", "failed", "boom");
  const auto summary = store.sweeps("s1").at(0);
  EXPECT_EQ(summary.state, "done");
  EXPECT_EQ(summary.jobs.at("done"), 1);
  EXPECT_EQ(summary.jobs.at("failed"), 1);
  EXPECT_TRUE(store.unfinished_jobs().empty());
  EXPECT_EQ(store.resolve_sweep("demo"), "s1");
}

TEST(StoreJobs, SweepListsKeepActiveOnesAndTheNewestFinished) {
  Store store(":memory:");
  for (int i = 0; i < 13; ++i) {
    const auto id = "s" + std::to_string(i);
    store.add_sweep({id, "demo", nlohmann::json::object(), {}, "me", 0, "2026-11-30T00:00:00.000Z"},
                    {{id + "/0", 0, "a", 0, "libtorch", 1, nlohmann::json::object(), 2}});
    if (i != 1) store.job_finished(id + "/0", "done");  // s1 stays active
  }
  const auto ids = [](const std::vector<SweepSummary>& sweeps) {
    std::vector<std::string> out;
    for (const auto& sweep : sweeps) out.push_back(sweep.sweep_id);
    return out;
  };
  EXPECT_EQ(ids(store.sweeps("", 0)), std::vector<std::string>{"s1"});
  EXPECT_EQ(ids(store.sweeps("", 2)), (std::vector<std::string>{"s1", "s11", "s12"}));
  EXPECT_EQ(store.sweeps("", -1).size(), 13u);
  EXPECT_EQ(ids(store.sweeps("s5", 0)), std::vector<std::string>{"s5"});
}

TEST(StoreJobs, CancelStopsQueuedAndRunningJobsOfASweep) {
  Store store(":memory:");
  store.add_sweep({"s1", "demo", nlohmann::json::object(), {}, "me", 0, "2026-11-30T00:00:00.000Z"},
                  {{"s1/0", 0, "a", 0, "libtorch", 1, nlohmann::json::object(), 2},
                   {"s1/1", 1, "b", 0, "libtorch", 1, nlohmann::json::object(), 2},
                   {"s1/2", 2, "c", 0, "libtorch", 1, nlohmann::json::object(), 2}});
  store.job_started("s1/0", 1, "agent-a");
  store.job_finished("s1/1", "done");
  const auto cancelled = store.cancellable("s1", "", Store::CancelScope::unfinished);
  EXPECT_EQ(cancelled, (std::vector<std::pair<std::string, std::string>>{{"s1/0", "running"}, {"s1/2", "queued"}}));
  // In two chunks, as the coordinator takes a large sweep's cancel.
  store.mark_cancelled(std::span(cancelled).first(1), "2026-11-30T01:00:00.000Z");
  EXPECT_EQ(store.job("s1/0")->state, "cancelled");
  EXPECT_EQ(store.job("s1/2")->state, "queued");
  store.mark_cancelled(std::span(cancelled).subspan(1), "2026-11-30T01:00:00.000Z");
  store.close_cancelled("s1", "", "2026-11-30T01:00:00.000Z");
  EXPECT_EQ(store.sweeps("s1").at(0).state, "cancelled");
  EXPECT_EQ(store.job("s1/1")->state, "done");
  EXPECT_TRUE(store.cancellable("s1", "", Store::CancelScope::unfinished).empty());
}

}  // namespace
}  // namespace ts::readers
