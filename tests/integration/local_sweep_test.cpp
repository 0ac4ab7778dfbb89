// `torchsweep run` and `torchsweep calibrate` (cli/local_sweep.hpp): a
// coordinator, one local agent and the store in one process, the jobs in
// real runner processes (the fake runner, and the real worker).
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "shared/errors.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class LocalSweeps : public testing::Cluster {};

TEST_F(LocalSweeps, RunDoesEverythingInOneCommandWithTheFakeRunner) {
  const auto file = write_file("quick.yaml", R"(
name: quick
axes: {mode: [eager, compiled], batch_size: [2, 4]}
fixed: {model: mlp}
repeats: 2
)");
  // A bad price, or environment name, is refused before anything runs, naming the option (a bad --env
  // ended the program uncaught, exit 134).
  for (const auto& [option, value] : {std::pair{"--price-per-hour", "Test CPU=cheap"}, {"--env", "a name=/bin/sh"}}) {
    const auto refused = torchsweep({"run", file.string(), "--db", db().string(), option, value});
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find(option), std::string::npos) << refused.err;
  }
  // The fake runner's results name the CPU "Test CPU": an hour of it costs 3.6 (docs/methodology.md).
  const auto finished =
      torchsweep({"run", file.string(), "--db", db().string(), "--runner", "libtorch=" + fake_runner().string(),
                  "--work-dir", (directory_ / "w").string(), "--price-per-hour", "Test CPU=3.6"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_NE(finished.err.find("[8/8] done"), std::string::npos) << finished.err;
  // Each result's cost, from its throughput and its run's wall time as the agent measured it.
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM results WHERE price_per_hour = 3.6 AND run_cost > 0 AND "
                       "abs(cost_per_million_samples - 3.6 / 3600 / samples_per_s * 1e6) < 1e-9"),
            "8\n");
  EXPECT_NE(finished.out.find("speedup [95% CI]"), std::string::npos) << finished.out;
  // Two repeats: the speedup stands without an interval (docs/query.md).
  EXPECT_NE(finished.out.find("2 [n too small: < 5 runs a side]"), std::string::npos) << finished.out;
  EXPECT_EQ(results().size(), 8u);
  // The runner got the job resolved by its agent (docs/worker.md): iters and threads decided, mlp's knobs given.
  EXPECT_EQ(store_rows("SELECT DISTINCT json_extract(document, '$.job.resolved') || ' ' || "
                       "json_extract(document, '$.job.runner') || ' ' || json_extract(document, '$.job.width') || ' ' "
                       "|| (json_extract(document, '$.job.threads') > 0) || ' ' || "
                       "json_extract(document, '$.job.iters') FROM result_documents ORDER BY 1"),
            "1 libtorch 1024 1 12500\n1 libtorch 1024 1 25000\n");
}

TEST_F(LocalSweeps, RunStopsAtItsBudgetAndKeepsWhatFinished) {
  // Grouped: the quick job runs first, then one that would outlast any budget.
  const auto file = write_file("boxed.yaml", R"(
name: boxed
axes:
  labels: [{sleep: "0"}, {sleep: "600"}, {sleep: "0", last: "yes"}]
fixed: {model: mlp, batch_size: 2}
order: grouped
)");
  const auto finished = torchsweep({"run", file.string(), "--db", db().string(), "--runner",
                                    "libtorch=" + fake_runner().string(), "--work-dir", (directory_ / "w").string(),
                                    "--budget-s", "8", "--budget-grace-s", "2", "--no-report"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_NE(finished.err.find("budget of 8s spent: 1 unstarted jobs cancelled; jobs in flight may finish within 2s"),
            std::string::npos)
      << finished.err;
  EXPECT_NE(finished.err.find("grace spent: 1 jobs in flight cancelled"), std::string::npos) << finished.err;
  EXPECT_NE(finished.err.find("1 of 3 jobs finished within the budget"), std::string::npos) << finished.err;
  EXPECT_EQ(results().size(), 1u);
  EXPECT_TRUE(wait_for([&] { return live_runners().empty(); }, 10s)) << "a runner outlived the budget";
  const auto bad = torchsweep({"run", file.string(), "--db", db().string(), "--budget-s", "0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--budget-s"), std::string::npos) << bad.err;
}

// The job in flight when the budget ends had paid for most of its run: it
// used to be cancelled with the jobs not yet started; it finishes within
// the grace and its result is kept.
TEST_F(LocalSweeps, AJobInFlightAtTheBudgetFinishesWithinTheGrace) {
  const auto file = write_file("boxed.yaml", R"(
name: boxed
axes:
  labels: [{sleep: "0"}, {sleep: "5"}, {sleep: "0", last: "yes"}]
fixed: {model: mlp, batch_size: 2}
order: grouped
)");
  const auto finished = torchsweep({"run", file.string(), "--db", db().string(), "--runner",
                                    "libtorch=" + fake_runner().string(), "--work-dir", (directory_ / "w").string(),
                                    "--budget-s", "3", "--budget-grace-s", "60", "--no-report"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_NE(finished.err.find("budget of 3s spent: 1 unstarted jobs cancelled"), std::string::npos) << finished.err;
  EXPECT_EQ(finished.err.find("grace spent"), std::string::npos) << finished.err;
  EXPECT_NE(finished.err.find("2 of 3 jobs finished within the budget"), std::string::npos) << finished.err;
  EXPECT_EQ(results().size(), 2u);
}

// A local run's agent is the only one that will run its sweep: an environment (or a runner) only an earlier
// run's agent offered, which the store still remembers, is refused at once. Before 2026-12-07 the submit check
// took the store's agents too, passed, and the run waited for an agent that never came until its budget ran out.
TEST_F(LocalSweeps, AnEnvironmentOnlyAnEarlierRunsAgentOfferedIsRefusedNotWaitedFor) {
  const auto file = write_file("extra.yaml",
                               "name: extra\naxes: {batch_size: [2]}\nfixed: {runner: fake, model: mlp, "
                               "env: extra}\n");
  const auto run = [&](std::vector<std::string> more) {
    std::vector<std::string> args{"run",
                                  file.string(),
                                  "--db",
                                  db().string(),
                                  "--python-runner",
                                  "fake=" + fake_runner().string(),
                                  "--no-default-runners",
                                  "--peak-probe",
                                  "off",
                                  "--work-dir",
                                  (directory_ / "w").string(),
                                  "--no-report",
                                  "--budget-s",
                                  "60"};
    args.insert(args.end(), more.begin(), more.end());
    return torchsweep(args);
  };
  ASSERT_EQ(run({"--env", "extra=/usr/bin/python3"}).exit_code, 0);
  const auto not_offered = run({});
  EXPECT_EQ(not_offered.exit_code, exit_code::invalid_input) << not_offered.err;
  EXPECT_NE(not_offered.err.find("no agent offers environment 'extra' (offered: none, as this run's agent reported)"),
            std::string::npos)
      << not_offered.err;
  EXPECT_EQ(results().size(), 1u);  // nothing stored, nothing waited for
}

// An A/A calibration (docs/noise.md): every configuration run --rounds times
// as separate processes, its noise split by level. The fake runner's jobs
// are off by a uniform draw of up to 6% (between processes: a spread of
// 0.06 / sqrt(3) = 0.035) and each of its 3 epochs by a Gaussian of 2%
// (within).
TEST_F(LocalSweeps, CalibrateRunsEachConfigurationItsRoundsAndSplitsItsNoise) {
  const auto file = write_file("cal.yaml", R"(
name: cal
axes: {mode: [eager, compiled]}
fixed: {model: mlp, batch_size: 2, labels: {noise: "0.06", epoch_noise: "0.02"}}
)");
  const auto finished = torchsweep({"calibrate", file.string(), "--rounds", "20", "--db", db().string(), "--runner",
                                    "libtorch=" + fake_runner().string(), "--work-dir", (directory_ / "w").string()});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_NE(finished.out.find("Noise by configuration"), std::string::npos) << finished.out;
  EXPECT_EQ(results().size(), 40u);
  EXPECT_EQ(store_rows("SELECT group_concat(tag) FROM sweep_tags"), "calibration\n");
  const auto noise = torchsweep({"query", "--db", db().string(), "--noise", "--format", "json"});
  ASSERT_EQ(noise.exit_code, 0) << noise.err;
  const auto rows = nlohmann::json::parse(noise.out);
  ASSERT_EQ(rows.size(), 2u) << noise.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("processes"), 20) << row.dump();
    EXPECT_EQ(row.at("nodes"), 1) << row.dump();
    EXPECT_TRUE(row.at("node_cv").is_null()) << row.dump();
    EXPECT_NEAR(row.at("within_cv").get<double>(), 0.02, 0.005) << row.dump();
    EXPECT_NEAR(row.at("process_cv").get<double>(), 0.035, 0.012) << row.dump();
    EXPECT_EQ(row.at("aa_pairs"), 2) << row.dump();
    EXPECT_TRUE(row.at("night_cv").is_null()) << "one sweep, one night: " << row.dump();
  }
  // Recorded in the store's own table, with its hosts and environments.
  const auto recorded = torchsweep({"query", "--db", db().string(), "--calibrations", "--format", "json"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const auto calibrations = nlohmann::json::parse(recorded.out);
  ASSERT_EQ(calibrations.size(), 2u) << recorded.out;
  for (const auto& row : calibrations) {
    EXPECT_EQ(row.at("rounds"), 20) << row.dump();
    EXPECT_EQ(row.at("night_runs"), 5) << row.dump();
    EXPECT_FALSE(row.at("hosts").get<std::string>().empty()) << row.dump();
    EXPECT_NE(row.at("environments").get<std::string>().find("torch"), std::string::npos) << row.dump();
    EXPECT_NE(row.at("configuration").get<std::string>().find("mlp"), std::string::npos) << row.dump();
    const auto mode =
        row.at("configuration").get<std::string>().find("compiled") != std::string::npos ? "compiled" : "eager";
    const auto same =
        std::find_if(rows.begin(), rows.end(), [&](const auto& other) { return other.at("mode") == mode; });
    ASSERT_NE(same, rows.end()) << mode;
    EXPECT_DOUBLE_EQ(row.at("process_cv").get<double>(), same->at("process_cv").get<double>()) << row.dump();
  }
  // A second calibration, another night: the between-night component appears.
  const auto again = torchsweep({"calibrate", file.string(), "--rounds", "6", "--db", db().string(), "--runner",
                                 "libtorch=" + fake_runner().string(), "--work-dir", (directory_ / "w").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto nights = torchsweep({"query", "--db", db().string(), "--noise", "--format", "json"});
  for (const auto& row : nlohmann::json::parse(nights.out)) EXPECT_TRUE(row.at("night_cv").is_number()) << row.dump();
  EXPECT_EQ(
      nlohmann::json::parse(torchsweep({"query", "--db", db().string(), "--calibrations", "--format", "json"}).out)
          .size(),
      4u);
  const auto bad = torchsweep({"calibrate", file.string(), "--rounds", "1", "--db", db().string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--rounds"), std::string::npos) << bad.err;
  const auto no_rounds = torchsweep({"calibrate", file.string(), "--db", db().string()});
  EXPECT_EQ(no_rounds.exit_code, 2);
  EXPECT_NE(no_rounds.err.find("--rounds"), std::string::npos) << no_rounds.err;
  // One local agent cannot spread a calibration over two nodes: said, and nothing runs.
  const auto spread = write_file("spread.yaml",
                                 "name: spread\naxes: {mode: [eager]}\nfixed: {model: mlp, batch_size: 2}\n"
                                 "calibration: {rounds: 4, nodes: 2}\n");
  const auto local = torchsweep({"calibrate", spread.string(), "--db", db().string()});
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_NE(local.err.find("calibration.nodes"), std::string::npos) << local.err;
}

TEST_F(LocalSweeps, RunWithTheRealWorker) {
  const auto file = write_file("tiny.yaml", R"(
name: tiny-real
axes: {mode: [eager, compiled]}
fixed: {model: mlp, batch_size: 8, input_size: 16, width: 32, depth: 1, epochs: 2, warmup: 2, iters: 2, threads: 1}
)");
  const auto finished =
      torchsweep({"run", file.string(), "--db", db().string(), "--work-dir", (directory_ / "w").string()});
  ASSERT_EQ(finished.exit_code, 0) << finished.err << finished.out;
  // Checked against the local agent's runners, though it had not said hello yet.
  EXPECT_EQ(finished.err.find("unchecked"), std::string::npos) << finished.err;
  EXPECT_NE(finished.out.find("Compiled vs eager"), std::string::npos) << finished.out;
  const auto rows = results();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok");
    EXPECT_EQ(row.at("runner"), "libtorch");
  }
  // How close to the machine's limit: the MLP's 2 x (16 x 32 + 32 x 10)
  // FLOPs a sample forward, 8 samples, 3 forwards a training step; the
  // rate at the median step; its fraction of the peak the worker measured.
  const auto figures = nlohmann::json::parse(
      store_rows("SELECT json_group_array(json_array(flops_per_step, achieved_flops_per_s, peak_flops_per_s, mfu, "
                 "achieved_flops_per_s / flops_per_step * median_step_s)) FROM results"));
  ASSERT_EQ(figures.size(), 2u) << figures.dump();
  for (const auto& row : figures) {
    EXPECT_EQ(row.at(0), 2.0 * (16 * 32 + 32 * 10) * 8 * 3) << row.dump();
    EXPECT_GT(row.at(2).get<double>(), 1e8) << "a CPU does 0.1 GFLOP/s in fp32: " << row.dump();
    EXPECT_NEAR(row.at(3).get<double>(), row.at(1).get<double>() / row.at(2).get<double>(), 1e-12) << row.dump();
    EXPECT_NEAR(row.at(4).get<double>(), 1.0, 1e-9) << row.dump();
  }
  // A CPU job has no GPU telemetry, and says why (docs/gpu-telemetry.md).
  EXPECT_EQ(store_rows("SELECT DISTINCT json_extract(document, '$.telemetry.status') || ': ' || "
                       "json_extract(document, '$.telemetry.reason') FROM result_documents"),
            "unavailable: the job ran on no GPU\n");
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM results WHERE throttled IS NULL"), "2\n");
  // The peak is measured once and cached in the work directory.
  const auto cache = nlohmann::json::parse(testing::slurp(directory_ / "w" / "peak_flops.json"));
  EXPECT_EQ(cache.at("peak").at("devices").at(0).at("device"), "cpu") << cache.dump();
  const auto again =
      torchsweep({"run", file.string(), "--db", db().string(), "--work-dir", (directory_ / "w").string(), "--verbose"});
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_EQ(again.err.find("peak probe: measuring"), std::string::npos) << again.err;
  EXPECT_EQ(nlohmann::json::parse(testing::slurp(directory_ / "w" / "peak_flops.json")), cache);
  // Two CPU figures, at the default thread count and at one, each with the kernel that reached it.
  ASSERT_EQ(cache.at("peak").at("devices").size(), 2u) << cache.dump();
  EXPECT_EQ(cache.at("peak").at("devices").at(1).at("threads"), 1) << cache.dump();
  EXPECT_NE(cache.at("peak").at("devices").at(0).at("kernels").at("fp32"), nullptr) << cache.dump();

  // A planted peak far below what the MLP reaches: the first job's utilisation is above 1 and says so;
  // the agent measures the peak again before the next job, which is judged against the new one.
  auto planted = cache;
  for (auto& device : planted["peak"]["devices"]) device["fp32"] = device["bf16"] = 1.0;
  std::ofstream(directory_ / "w" / "peak_flops.json") << planted.dump();
  const auto remeasured =
      torchsweep({"run", file.string(), "--db", db().string(), "--work-dir", (directory_ / "w").string(), "--verbose"});
  ASSERT_EQ(remeasured.exit_code, 0) << remeasured.err << remeasured.out;
  EXPECT_NE(remeasured.err.find("its FLOP rate exceeded the measured peak"), std::string::npos) << remeasured.err;
  EXPECT_NE(remeasured.err.find("measuring the devices' peak again"), std::string::npos) << remeasured.err;
  // The newest first: the second job against the measured peak, the first against the planted one.
  EXPECT_EQ(store_rows("SELECT group_concat(flags, ' ') FROM (SELECT peak_below_achieved || ':' || (mfu > 1) AS flags "
                       "FROM results ORDER BY rowid DESC LIMIT 2)"),
            "0:0 1:1\n");
  EXPECT_NE(nlohmann::json::parse(testing::slurp(directory_ / "w" / "peak_flops.json")), planted);
}

TEST_F(LocalSweeps, RunTrainsOnSeveralCpuRanksAndShowsScaling) {
  const auto file = write_file("ranks.yaml", R"(
name: tiny-ranks
axes: {gpus: [1, 2]}
fixed: {model: mlp, batch_size: 8, input_size: 16, width: 32, depth: 1, epochs: 2, warmup: 2, iters: 3}
repeats: 2
)");
  const auto finished =
      torchsweep({"run", file.string(), "--db", db().string(), "--work-dir", (directory_ / "w").string()});
  ASSERT_EQ(finished.exit_code, 0) << finished.err << finished.out;
  EXPECT_NE(finished.out.find("scaling_efficiency [95% CI]"), std::string::npos) << finished.out;
  const auto rows = results();
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok");
  const auto query = torchsweep({"query", "--db", db().string(), "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  for (const auto& row : nlohmann::json::parse(query.out)) {
    EXPECT_EQ(row.at("runs"), 2);
    const auto efficiency = row.at("scaling_efficiency").get<double>();
    EXPECT_TRUE(row.at("gpus") == 2 ? efficiency > 0.0 : std::abs(efficiency - 1.0) < 1e-9) << row.dump();
  }
}

TEST_F(LocalSweeps, RunStoresBothRunnersSideBySide) {
  const auto file = write_file("paths.yaml", R"(
name: three-paths
axes: {runner: [libtorch, torch-compile], mode: [eager, compiled]}
fixed: {model: mlp, batch_size: 8, input_size: 16, width: 32, depth: 1, epochs: 2, warmup: 2, iters: 2, threads: 1}
)");
  const auto finished =
      torchsweep({"run", file.string(), "--db", db().string(), "--work-dir", (directory_ / "w").string()});
  ASSERT_EQ(finished.exit_code, 0) << finished.err << finished.out;
  const auto query = torchsweep({"query", "--db", db().string(), "--group-by", "runner,mode", "--metric",
                                 "epoch_time,compile_time", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  std::set<std::pair<std::string, std::string>> paths;
  for (const auto& row : nlohmann::json::parse(query.out)) {
    paths.insert({row.at("runner").get<std::string>(), row.at("mode").get<std::string>()});
    EXPECT_EQ(row.at("runs"), 1);
  }
  EXPECT_EQ(
      paths,
      (std::set<std::pair<std::string, std::string>>{
          {"libtorch", "eager"}, {"libtorch", "compiled"}, {"torch-compile", "eager"}, {"torch-compile", "compiled"}}));
  for (const auto& row : results()) {
    if (row.at("runner") == "torch-compile" && row.at("mode") == "compiled") {
      EXPECT_EQ(row.at("compiler"), "inductor");
    }
  }
}

}  // namespace
}  // namespace ts
