// Two values of one axis side by side (readers/query.hpp, docs/query.md):
// speedups and memory reductions with their intervals, the break-even of a
// compile, and the axes that belong to each side (each runner's
// environment).
#include <gtest/gtest.h>

#include <tuple>

#include "cli/table_renderer.hpp"
#include "readers/compiler_figures.hpp"
#include "readers/query.hpp"
#include "readers/report.hpp"
#include "shared/errors.hpp"
#include "tests/readers/query_store.hpp"

namespace ts::readers {
namespace {

using namespace store;  // the records the tests write
using query_fixture::QueryStore;

using simulation::all_judged;
using simulation::make_result;
using simulation::SyntheticResult;

TEST_F(QueryStore, CompareModeGivesSpeedupAndMemoryReductionWithIntervals) {
  QueryOptions options;
  options.compare = "mode";
  options.group_by = {"model", "mode"};  // mode is taken out of the grouping
  options.filter.sweeps = {"night-1"};
  const auto table = run(options);
  EXPECT_EQ(table.columns.front(), "model");
  ASSERT_EQ(table.rows.size(), 2u);
  const auto resnet = row(table, {{"model", "resnet50"}});
  EXPECT_EQ(resnet[column(table, "runs:eager")], 6);
  EXPECT_EQ(resnet[column(table, "runs:compiled")], 6);
  const double speedup = resnet[column(table, "speedup")].get<double>();
  EXPECT_NEAR(speedup, 2.0 / 1.6, 1e-9);  // every run scaled alike, so the medians' ratio is exact
  EXPECT_LE(resnet[column(table, "speedup_low")].get<double>(), speedup);
  EXPECT_GE(resnet[column(table, "speedup_high")].get<double>(), speedup);
  EXPECT_NEAR(resnet[column(table, "memory_reduction")].get<double>(), 0.2, 1e-9);
  const auto mlp = row(table, {{"model", "mlp"}});
  EXPECT_NEAR(mlp[column(table, "speedup")].get<double>(), 2.0, 1e-9);
}

// When a compile pays for itself: the compiled runs' compile time (0.5 s:
// capture + first iteration) over the median step's saving, rounded up;
// "never" when the compiled step is slower.
TEST_F(QueryStore, CompareModeGivesEachCompilesBreakEvenInIterations) {
  QueryOptions options;
  options.compare = "mode";
  options.group_by = {"model"};
  options.filter.sweeps = {"night-1"};
  const auto table = run(options);
  // Median steps (runs 1.00..1.05 of the base, ten steps an epoch): mlp 0.1025 s eager, 0.05125 s compiled.
  EXPECT_EQ(row(table, {{"model", "mlp"}})[column(table, "break_even_iters")], 10);       // 0.5 / 0.05125 = 9.76
  EXPECT_EQ(row(table, {{"model", "resnet50"}})[column(table, "break_even_iters")], 13);  // 0.5 / 0.041 = 12.2
  add_night("night-3", "2026-11-30T00:00:00.000Z", 1.5);  // resnet50 compiled 2.4 s against eager 2.0 s
  options.filter.sweeps = {"night-3"};
  const auto slower = run(options);
  EXPECT_EQ(row(slower, {{"model", "resnet50"}})[column(slower, "break_even_iters")], "never");
  // Named the other way round, the same figure.
  options.compare = "mode=compiled,eager";
  const auto reversed = run(options);
  EXPECT_EQ(row(reversed, {{"model", "mlp"}})[column(reversed, "break_even_iters")], 10);
  // Not a mode comparison: no such column.
  options.compare = "model";
  const auto models = run(options);
  EXPECT_EQ(std::find(models.columns.begin(), models.columns.end(), "break_even_iters"), models.columns.end());
}

TEST_F(QueryStore, BelowFiveRunsASideTheEstimateStandsWithoutAnInterval) {
  add_night("night-3", "2026-11-30T00:00:00.000Z", 1.0, 2);
  QueryOptions options;
  options.compare = "mode";
  options.filter.sweeps = {"night-3"};
  const auto table = run(options);
  const auto mlp = row(table, {{"model", "mlp"}});
  EXPECT_NEAR(mlp[column(table, "speedup")].get<double>(), 2.0, 1e-9);
  EXPECT_TRUE(mlp[column(table, "speedup_low")].is_null());
  EXPECT_TRUE(mlp[column(table, "memory_reduction_high")].is_null());
  EXPECT_NE(cli::render(table, cli::Format::table).find("n too small"), std::string::npos)
      << cli::render(table, cli::Format::table);
}

TEST_F(QueryStore, CompareNamesItsMemoryFieldAndCanBeAskedForAnother) {
  QueryOptions options;
  options.compare = "mode";
  options.filter.sweeps = {"night-1"};
  auto table = run(options);
  const auto mlp = row(table, {{"model", "mlp"}});
  EXPECT_EQ(mlp[column(table, "memory_field")], "peak_memory: peak_rss_bytes");
  options.memory_metric = "warmup_memory";  // these results have no warm-up figure
  table = run(options);
  EXPECT_TRUE(row(table, {{"model", "mlp"}})[column(table, "memory_reduction")].is_null());
  for (const std::string bad : {"epoch_time", "nonsense"}) {
    options.memory_metric = bad;
    try {
      run(options);
      FAIL() << bad;
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "--memory-metric") << error.what();
    }
  }
}

TEST_F(QueryStore, MemoryFiguresOfDifferentKindsAreNotCompared) {
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int ordinal = 0; ordinal < 2; ++ordinal) {
    const auto job_id = "mixed/" + std::to_string(ordinal);
    jobs.push_back({job_id, ordinal, "k" + std::to_string(ordinal), 0, "libtorch", 1, {}, 3});
    SyntheticResult r;
    r.job_id = job_id;
    r.mode = ordinal == 0 ? "eager" : "compiled";
    auto document = make_result(r);
    // One runner reports the timed phase's own footprint, the other only a
    // whole-process peak.
    if (ordinal == 1) document["memory"]["rss_footprint_bytes"] = 1 << 20;
    results.push_back(document);
  }
  store_.add_sweep({"mixed", "mixed", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");
  QueryOptions options;
  options.compare = "mode";
  options.filter.sweeps = {"mixed"};
  const auto table = run(options);
  const auto resnet = row(table, {{"model", "resnet50"}});
  EXPECT_TRUE(resnet[column(table, "memory_reduction")].is_null());
  EXPECT_EQ(resnet[column(table, "memory_field")],
            "peak_memory: peak_rss_bytes vs rss_footprint_bytes (not comparable)");
}

TEST_F(QueryStore, CompareEveryOtherValueAgainstANamedReference) {
  QueryOptions options;
  options.compare = "model=mlp,*";
  options.filter.sweeps = {"night-1"};
  const auto table = run(options);
  EXPECT_EQ(table.columns.front(), "model");
  EXPECT_NE(std::find(table.columns.begin(), table.columns.end(), "runs:mlp"), table.columns.end());
  EXPECT_NE(std::find(table.columns.begin(), table.columns.end(), "epoch_time_s:other"), table.columns.end());
  const auto eager = row(table, {{"model", "resnet50"}, {"mode", "eager"}});
  EXPECT_NEAR(eager[column(table, "speedup")].get<double>(), 1.0 / 2.0, 1e-9);  // mlp 1.0 s, resnet50 2.0 s
  options.compare = "model=vgg,*";
  EXPECT_THROW(run(options), InvalidInput);
}

TEST_F(QueryStore, CompareAnyAxisWithNamedValues) {
  QueryOptions options;
  options.compare = "model=resnet50,mlp";
  options.group_by = {"mode"};
  options.metrics = {"epoch_time"};
  options.filter.sweeps = {"night-1"};
  const auto table = run(options);
  const auto eager = row(table, {{"mode", "eager"}});
  EXPECT_NEAR(eager[column(table, "speedup")].get<double>(), 2.0, 1e-9);
  options.compare = "model";  // two values present: taken in sorted order
  EXPECT_NEAR(row(run(options), {{"mode", "eager"}})[column(table, "speedup")].get<double>(), 0.5, 1e-9);
}

// A sweep of the worker (no environment: env null), torch.compile (system)
// and JAX (its venv): the report compares the environments that are named
// and leaves the worker's results out. It failed with "--compare: expected
// AXIS or AXIS=REFERENCE,OTHER, got 'env=system,'" (scripts/gpu-visit's
// dry run found it), and `torchsweep run` exited 2 after its sweep.
TEST_F(QueryStore, EnvironmentsAreComparedWithoutTheResultsThatRanInNone) {
  std::vector<nlohmann::json> results;
  std::vector<store::JobRecord> jobs;
  int index = 0;
  for (const auto& [runner, env] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"libtorch", nullptr}, {"torch-compile", "system"}, {"jax", "jax"}}) {
    SyntheticResult r;
    r.job_id = "envs/" + std::to_string(index);
    r.sweep = "envs";
    r.model = "mlp";
    r.epoch_seconds = {1.0, 1.0, 1.0};
    auto result = make_result(r);
    result["job"]["runner"] = runner;
    result["runner"]["name"] = runner;
    if (env.is_null()) {
      result["context"].erase("env");
    } else {
      result["context"]["env"] = {
          {"name", env}, {"python", "/usr/bin/python3"}, {"versions", nlohmann::json::object()}};
    }
    results.push_back(result);
    jobs.push_back({r.job_id, index++, "mlp", 0, runner, 1, {}, 3});
  }
  store_.add_sweep({"envs", "envs", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");
  ReportOptions options;
  options.filter.sweeps = {"envs"};
  nlohmann::json data;
  ASSERT_NO_THROW(data = report_data(store_.database(), options));
  QueryOptions compare;
  compare.filter.sweeps = {"envs"};
  compare.compare = "env=system,*";
  const auto table = run(compare);
  // Compared against jax alone (the runners differ, so no configuration pairs up).
  ASSERT_FALSE(table.rows.empty());
  for (const auto& row : table.rows) EXPECT_EQ(row[column(table, "env")], "jax");
  // The two-value form too: the results without an environment are not a third value.
  compare.compare = "env";
  ASSERT_NO_THROW(run(compare));
}

// The README's frameworks example: LibTorch ran in the system's PyTorch,
// TensorFlow and JAX each in their own venv, five runs a side. Since the
// environment became a configuration axis no runner pair formed ("runs:
// libtorch 0" beside every TensorFlow and JAX row, no speedup, the memory
// field "(not comparable)"). A runner is compared with the other runners in
// whatever environments each ran; each side's environment stays in view,
// and one runner's two environments are two rows, never pooled.
TEST_F(QueryStore, RunnersPairAcrossTheEnvironmentsEachRanIn) {
  std::vector<nlohmann::json> results;
  std::vector<store::JobRecord> jobs;
  int index = 0;
  const auto add = [&](const std::string& runner, const std::string& env, double seconds) {
    for (int run = 0; run < 5; ++run) {
      SyntheticResult r;
      r.job_id = "frameworks/" + std::to_string(index);
      r.sweep = "frameworks";
      r.model = "mlp";
      r.mode = "compiled";
      const double t = seconds * (1.0 + 0.01 * run);
      r.epoch_seconds = {t, t, t};
      auto result = make_result(r);
      result["job"]["runner"] = runner;
      result["runner"]["name"] = runner;
      result["context"]["env"] = {
          {"name", env}, {"python", "/usr/bin/python3"}, {"versions", nlohmann::json::object()}};
      results.push_back(result);
      jobs.push_back({r.job_id, index++, "mlp" + runner + env, run, runner, 1, {}, 3});
    }
  };
  add("libtorch", "system", 1.0);
  add("libtorch", "torch-2.15", 0.8);
  add("tensorflow", "tensorflow", 2.0);
  add("jax", "jax", 4.0);
  store_.add_sweep({"frameworks", "frameworks", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"},
                   jobs);
  store_.ingest_results(all_judged(results), "agent");

  QueryOptions options;
  options.filter.sweeps = {"frameworks"};
  options.compare = "runner=libtorch,*";
  const auto table = run(options);
  EXPECT_EQ(std::count(table.columns.begin(), table.columns.end(), "env"), 0);
  // Each framework against each of LibTorch's environments: four rows, each a pair with an interval.
  ASSERT_EQ(table.rows.size(), 4u);
  for (const auto& [other, other_env, libtorch_env, expected] :
       std::vector<std::tuple<std::string, std::string, std::string, double>>{
           {"jax", "jax", "system", 0.25},
           {"jax", "jax", "torch-2.15", 0.2},
           {"tensorflow", "tensorflow", "system", 0.5},
           {"tensorflow", "tensorflow", "torch-2.15", 0.4}}) {
    const auto pair = row(table, {{"runner", other}, {"env:libtorch", libtorch_env}});
    EXPECT_EQ(pair[column(table, "env:other")], other_env);
    EXPECT_EQ(pair[column(table, "runs:libtorch")], 5);
    EXPECT_EQ(pair[column(table, "runs:other")], 5);
    EXPECT_NEAR(pair[column(table, "speedup")].get<double>(), expected, 1e-9) << other << " " << libtorch_env;
    ASSERT_TRUE(pair[column(table, "speedup_low")].is_number()) << other << " " << libtorch_env;
    ASSERT_TRUE(pair[column(table, "speedup_high")].is_number()) << other << " " << libtorch_env;
    EXPECT_LE(pair[column(table, "speedup_low")].get<double>(), expected);
    EXPECT_GE(pair[column(table, "speedup_high")].get<double>(), expected);
    EXPECT_EQ(pair[column(table, "memory_field")], "peak_memory: peak_rss_bytes");
  }
  // Two named runners, the same.
  options.compare = "runner=libtorch,tensorflow";
  const auto two = run(options);
  ASSERT_EQ(two.rows.size(), 2u);
  EXPECT_NEAR(row(two, {{"env:libtorch", "system"}})[column(two, "speedup")].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(row(two, {{"env:libtorch", "system"}})[column(two, "env:tensorflow")], "tensorflow");
  // Environments of one runner still compare within it.
  options.compare = "env=system,torch-2.15";
  const auto versions = run(options);
  ASSERT_EQ(versions.rows.size(), 1u);
  EXPECT_EQ(versions.rows[0][column(versions, "runner")], "libtorch");
  EXPECT_NEAR(versions.rows[0][column(versions, "speedup")].get<double>(), 1.25, 1e-9);
  // Grouped by env explicitly, a runner comparison still takes the environment per side.
  options.compare = "runner=libtorch,jax";
  options.group_by = {"model", "env"};
  const auto grouped = run(options);
  ASSERT_EQ(grouped.rows.size(), 2u);
  EXPECT_EQ(grouped.rows[0][column(grouped, "env:jax")], "jax");
}

// The report's compiler section: compile time with cold and warm caches and
// each one's break-even against the same eager runs (compile_cache is the
// compiled side's own; eager runs have none).
TEST_F(QueryStore, CompilerFiguresGiveEachCacheStatesCompileTimeAndBreakEven) {
  std::vector<nlohmann::json> results;
  std::vector<store::JobRecord> jobs;
  int index = 0;
  // Eager steps 0.1 s, compiled 0.05 s (ten steps an epoch); compile time 2 s cold, 0.25 s warm.
  const auto add = [&](const std::string& mode, const std::string& cache, double epoch, double compile) {
    for (int run = 0; run < 3; ++run) {
      SyntheticResult r;
      r.job_id = "caches/" + std::to_string(index);
      r.sweep = "caches";
      r.model = "mlp";
      r.mode = mode;
      r.epoch_seconds = {epoch, epoch, epoch};
      auto result = make_result(r);
      result["timing"]["first_iteration_seconds"] = compile;
      if (!cache.empty()) {
        result["execution"]["compile"] = {{"backend", "inductor"},
                                          {"compile_mode", "default"},
                                          {"dynamic", nullptr},
                                          {"fullgraph", false},
                                          {"graph_breaks", 0},
                                          {"graphs", 1},
                                          {"cache", {{"kind", cache}, {"fill_seconds", nullptr}}}};
      }
      results.push_back(result);
      jobs.push_back({r.job_id, index++, "mlp" + mode + cache, run, "libtorch", 1, {}, 3});
    }
  };
  add("eager", "", 1.0, 0.1);
  add("compiled", "cold", 0.5, 2.0);
  add("compiled", "warm", 0.5, 0.25);
  store_.add_sweep({"caches", "caches", nlohmann::json::object(), {}, "test", 0, "2026-11-30T00:00:00.000Z"}, jobs);
  store_.ingest_results(all_judged(results), "agent");
  QueryOptions options;
  options.filter.sweeps = {"caches"};
  options.metrics = {"epoch_time", "compile_time"};
  options.compare = "mode";
  const auto figures = compiler_figures(store_.database(), options, run(options));
  const auto& cache = figures.at("cache");
  ASSERT_EQ(cache.size(), 1u) << figures.dump();
  EXPECT_DOUBLE_EQ(cache[0].at("cold_s").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(cache[0].at("warm_s").get<double>(), 0.25);
  EXPECT_EQ(cache[0].at("cold_break_even_iters"), 40);  // 2 s / 0.05 s saved a step
  EXPECT_EQ(cache[0].at("warm_break_even_iters"), 5);   // 0.25 s / 0.05 s
}

}  // namespace
}  // namespace ts::readers
