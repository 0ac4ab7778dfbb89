// Sweeps through real coordinator and agent processes on 127.0.0.1, run by
// a fast fake runner: scheduling, retries, lost agents, cancellation and
// restarts (`torchsweep run` and `calibrate`: local_sweep_test.cpp).
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "simulation/simulated_agent.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Sweeps : public testing::Cluster {
 protected:
  // Starts `count` agents with the fake runner registered as libtorch.
  void start_agents(int count) {
    const auto runner = fake_runner();
    for (int i = 0; i < count; ++i)
      start_agent("node-" + std::to_string(i), {"--runner", "libtorch=" + runner.string()});
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == static_cast<std::size_t>(count); }, 15s));
  }
  std::string submit(const std::string& yaml) {
    const auto file = write_file("sweep" + std::to_string(++sweeps_) + ".yaml", yaml);
    const auto finished = torchsweep({"submit", file.string(), "--coordinator", endpoint()});
    EXPECT_EQ(finished.exit_code, 0) << finished.err;
    return finished.out;
  }
  bool sweep_ends(const std::string& state, std::chrono::milliseconds deadline, std::size_t sweep = 0) {
    return wait_for([&] { return sweep_state(sweep) == state; }, deadline);
  }
  int sweeps_ = 0;
};

TEST_F(Sweeps, HundredJobsOnThreeAgentsEachStoredExactlyOnce) {
  start_coordinator();
  start_agents(3);
  submit(R"(
name: hundred
axes:
  batch_size: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]
  mode: [eager, compiled]
fixed: {model: mlp}
repeats: 2
)");
  ASSERT_TRUE(sweep_ends("done", 120s)) << status().dump();
  EXPECT_EQ(jobs_in("done"), 100);
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 100u);
  EXPECT_TRUE(std::all_of(stored.begin(), stored.end(), [](const auto& entry) { return entry.second == 1; }));
  // Every agent took a share: node-exclusive jobs spread over free agents.
  std::set<std::string> agents;
  for (const auto& row : results()) agents.insert(row.at("agent").get<std::string>());
  EXPECT_EQ(agents.size(), 3u);
  // The query answers per-configuration medians with speedups from this store.
  const auto query = torchsweep({"query", "--db", db().string(), "--compare", "mode", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  const auto rows = nlohmann::json::parse(query.out);
  ASSERT_EQ(rows.size(), 25u);
  EXPECT_NEAR(rows[0].at("speedup").get<double>(), 2.0, 1e-9);
}

// The operator's --reader-threads: one thread reads every agent's results and stores each once; a count past the
// range is a bad argument, named.
TEST_F(Sweeps, OneReaderThreadReadsEveryResultAndStoresEachOnce) {
  start_coordinator(0, {"--reader-threads", "1"});
  EXPECT_NE(testing::slurp(directory_ / "coordinator.log").find("(reader threads: 1)"), std::string::npos);
  start_agents(2);
  submit(
      "name: one-reader\naxes:\n  batch_size: [1, 2, 3, 4, 5]\n  mode: [eager, compiled]\nfixed: {model: mlp}\n"
      "repeats: 2\n");
  ASSERT_TRUE(sweep_ends("done", 60s)) << status().dump();
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 20u);
  EXPECT_TRUE(std::all_of(stored.begin(), stored.end(), [](const auto& entry) { return entry.second == 1; }));
  const auto refused =
      torchsweep({"coordinator", "--reader-threads", "65", "--db", (directory_ / "other.db").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--reader-threads"), std::string::npos) << refused.err;
}

TEST_F(Sweeps, JobOfAKilledAgentIsRequeuedAndFinishesElsewhere) {
  start_coordinator();
  start_agents(2);
  submit(R"(
name: survivor
axes: {batch_size: [1, 2, 3, 4]}
fixed: {model: mlp, labels: {sleep: "1.5"}}
)");
  // Kill node-0 while it runs a job.
  ASSERT_TRUE(wait_for(
      [&] {
        const auto reply = status();
        return !reply.is_null() && reply.at("agents").at(0).at("running").size() == 1;
      },
      15s));
  agents_.at(0)->signal(SIGKILL);
  ASSERT_TRUE(sweep_ends("done", 60s)) << status().dump();
  const auto rows = results();
  ASSERT_EQ(rows.size(), 4u);
  int retried = 0;
  for (const auto& row : rows) {
    if (row.at("attempt") == 2) {
      ++retried;
      EXPECT_EQ(row.at("agent"), "node-1");
    }
  }
  EXPECT_EQ(retried, 1);
}

TEST_F(Sweeps, CrashesAreRetriedThenFailWithTheReasonAndTheSweepGoesOn) {
  start_coordinator();
  start_agents(1);
  submit(R"(
name: flaky
axes:
  labels: [{behaviour: crash-first}, {behaviour: crash}, {behaviour: refuse}, {behaviour: ok}]
fixed: {model: mlp, batch_size: 4}
max_attempts: 2
order: grouped
)");
  ASSERT_TRUE(sweep_ends("done", 60s)) << status().dump();
  EXPECT_EQ(jobs_in("done"), 2);
  EXPECT_EQ(jobs_in("failed"), 2);
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 2u);  // crash-first (attempt 2) and ok
  // The store keeps why: attempts used, and the reason with the exit code.
  const auto finished = torchsweep({"status", "--coordinator", endpoint()});
  EXPECT_NE(finished.out.find("flaky"), std::string::npos);
  const auto jobs = store_rows("SELECT ordinal, state, attempts, last_error FROM jobs ORDER BY ordinal");
  EXPECT_NE(jobs.find("1|failed|2|exited with code 1"), std::string::npos) << jobs;
  EXPECT_NE(jobs.find("2|failed|1|the runner refused the job (exit 2)"), std::string::npos) << jobs;
}

TEST_F(Sweeps, AdaptiveRepeatsStopAQuietPairAtItsFirstIntervalAndANoisyOneAtItsMaximum) {
  start_coordinator();
  start_agents(2);
  submit(R"(
name: adaptive
axes:
  mode: [eager, compiled]
  labels: [{noise: "0"}, {noise: "0.3"}]
fixed: {model: mlp, batch_size: 4}
repeats: {min: 3, max: 8, until: {compare: mode, ci_half_width: 0.02}}
)");
  ASSERT_TRUE(sweep_ends("done", 120s)) << status().dump();
  const auto reply = status();
  std::map<std::string, std::string> stops;  // noise -> state after rounds
  for (const auto& pair : reply.at("sweeps").at(0).at("adaptive")) {
    stops[pair.at("pair").at("labels").at("noise")] =
        pair.at("state").get<std::string>() + " after " + std::to_string(pair.at("rounds").get<int64_t>());
  }
  // Identical runs: the interval is exact at the first round with 5 runs a
  // side; runs scattered by 30% never get within ±2% before the maximum.
  EXPECT_EQ(stops["0"], "converged after 5") << reply.dump();
  EXPECT_EQ(stops["0.3"], "max_reached after 8") << reply.dump();
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 2u * 5 + 2u * 8);
  for (const auto& [job, count] : stored) EXPECT_EQ(count, 1) << job;
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM jobs WHERE state = 'done'"), "26\n");
  // The query says the same, from the store.
  const auto query = torchsweep({"query", "--db", db().string(), "--adaptive", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  std::map<std::string, std::string> queried;
  for (const auto& row : nlohmann::json::parse(query.out)) {
    const auto pair = nlohmann::json::parse(row.at("configuration").get<std::string>());
    queried[pair.at("labels").at("noise")] =
        row.at("state").get<std::string>() + " after " + std::to_string(row.at("rounds").get<int64_t>());
  }
  EXPECT_EQ(queried, stops) << query.out;
}

// pairing: {by: mode} (docs/noise.md): each pair's repeats run on one of
// two agents in alternation, read back from the stored start times, and the
// compared query counts them as paired; the same sweep without pairing has
// no paired run.
TEST_F(Sweeps, APairedSweepRunsEachPairOnOneAgentInAlternationAndTheQuerySaysSo) {
  start_coordinator();
  start_agents(2);
  const std::string matrix = R"(
axes:
  mode: [eager, compiled]
  batch_size: [4, 8, 12]
fixed: {model: mlp, labels: {sleep: "0.05"}}
repeats: 4
)";
  submit("name: paired\npairing: {by: mode}\n" + matrix);
  ASSERT_TRUE(sweep_ends("done", 120s)) << status().dump();
  // batch size -> the modes and agents of its jobs, in the order they started
  std::map<std::string, std::vector<std::string>> modes, agents;
  const auto rows = store_rows(
      "SELECT json_extract(config_key, '$.batch_size'), json_extract(config_key, '$.mode'), agent FROM jobs "
      "ORDER BY started_at, ordinal");
  std::istringstream lines(rows);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find('|'), second = line.rfind('|');
    modes[line.substr(0, first)].push_back(line.substr(first + 1, second - first - 1));
    agents[line.substr(0, first)].push_back(line.substr(second + 1));
  }
  ASSERT_EQ(modes.size(), 3u) << rows;
  const std::vector<std::string> alternation{"eager", "compiled", "compiled", "eager",
                                             "eager", "compiled", "compiled", "eager"};
  for (const auto& [batch, order] : modes) {
    EXPECT_EQ(order, alternation) << "batch size " << batch << ":\n" << rows;
    EXPECT_EQ(std::set<std::string>(agents[batch].begin(), agents[batch].end()).size(), 1u)
        << "batch size " << batch << ":\n"
        << rows;
  }
  const auto paired =
      torchsweep({"query", "--db", db().string(), "--sweep", "paired", "--compare", "mode", "--format", "json"});
  ASSERT_EQ(paired.exit_code, 0) << paired.err;
  for (const auto& row : nlohmann::json::parse(paired.out)) EXPECT_EQ(row.at("paired"), 8) << paired.out;

  submit("name: unpaired\n" + matrix);
  ASSERT_TRUE(sweep_ends("done", 120s, 1)) << status().dump();
  const auto unpaired =
      torchsweep({"query", "--db", db().string(), "--sweep", "unpaired", "--compare", "mode", "--format", "json"});
  ASSERT_EQ(unpaired.exit_code, 0) << unpaired.err;
  for (const auto& row : nlohmann::json::parse(unpaired.out)) EXPECT_EQ(row.at("paired"), 0) << unpaired.out;
}

// Adaptive repeats until the regression rule has the power asked for
// (docs/noise.md): identical runs give it at 5 rounds, the first at which
// the exact test can fire; runs scattered by up to 30% never give a 5%
// slowdown a 90% chance before the maximum.
TEST_F(Sweeps, AdaptiveRepeatsUntilAPowerStopAQuietPairAtFiveRoundsAndANoisyOneAtItsMaximum) {
  start_coordinator();
  start_agents(2);
  submit(R"(
name: powered
axes:
  mode: [eager, compiled]
  labels: [{noise: "0"}, {noise: "0.3"}]
fixed: {model: mlp, batch_size: 4}
repeats: {min: 3, max: 7, until: {compare: mode, power: 0.9, slowdown: 0.05}}
)");
  ASSERT_TRUE(sweep_ends("done", 120s)) << status().dump();
  const auto query = torchsweep({"query", "--db", db().string(), "--adaptive", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  std::map<std::string, nlohmann::json> stops;
  for (const auto& row : nlohmann::json::parse(query.out))
    stops[nlohmann::json::parse(row.at("configuration").get<std::string>()).at("labels").at("noise")] = row;
  EXPECT_EQ(stops["0"].at("state"), "converged") << query.out;
  EXPECT_EQ(stops["0"].at("rounds"), 5) << query.out;
  EXPECT_GE(stops["0"].at("power").get<double>(), 0.9) << query.out;
  EXPECT_EQ(stops["0.3"].at("state"), "max_reached") << query.out;
  EXPECT_EQ(stops["0.3"].at("rounds"), 7) << query.out;
  EXPECT_LT(stops["0.3"].at("power").get<double>(), 0.9) << query.out;
}

// `calibrate --coordinator` on a cluster of two agents (docs/noise.md):
// each configuration's rounds alternate between the two agents, read back
// from the stored jobs; the sweep is tagged for the thresholds, and its
// noise table, computed by the client from the store read-only, is
// recorded by the coordinator.
TEST_F(Sweeps, ACalibrationOverTwoNodesRunsEachConfigurationsRoundsOnBothAgentsInTurn) {
  start_coordinator();
  start_agents(2);
  const auto file = write_file("spread.yaml", R"(
name: spread-calibration
axes: {mode: [eager, compiled]}
fixed: {model: mlp, batch_size: 2, labels: {sleep: "0.05", noise: "0.04"}}
calibration: {rounds: 6, nodes: 2}
)");
  const auto calibrated = torchsweep(
      {"calibrate", file.string(), "--coordinator", endpoint(), "--db", db().string(), "--timeout-s", "120"});
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  EXPECT_NE(calibrated.out.find("Noise by configuration"), std::string::npos) << calibrated.out;
  EXPECT_EQ(sweep_state(), "done");
  EXPECT_EQ(store_rows("SELECT group_concat(tag) FROM sweep_tags"), "calibration\n");
  const auto recorded = torchsweep({"query", "--db", db().string(), "--calibrations", "--format", "json"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const auto calibrations = nlohmann::json::parse(recorded.out);
  ASSERT_EQ(calibrations.size(), 2u) << recorded.out;
  for (const auto& row : calibrations) {
    EXPECT_EQ(row.at("rounds"), 6) << row.dump();
    EXPECT_EQ(row.at("processes"), 6) << row.dump();
  }
  // mode -> round -> agent
  std::map<std::string, std::map<int, std::string>> agents;
  std::istringstream lines(
      store_rows("SELECT json_extract(config_key, '$.mode'), repeat, agent FROM jobs WHERE state = 'done'"));
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find('|'), second = line.rfind('|');
    agents[line.substr(0, first)][std::stoi(line.substr(first + 1, second - first - 1))] = line.substr(second + 1);
  }
  ASSERT_EQ(agents.size(), 2u);
  for (const auto& [mode, rounds] : agents) {
    ASSERT_EQ(rounds.size(), 6u) << mode;
    EXPECT_NE(rounds.at(0), rounds.at(1)) << mode;
    for (int round = 2; round < 6; ++round) EXPECT_EQ(rounds.at(round), rounds.at(round % 2)) << mode << " " << round;
  }
}

TEST_F(Sweeps, GpuJobsWaitWhileOnlyCpuAgentsAreConnected) {
  start_coordinator();
  start_agents(1);
  submit(R"(
name: needs-gpus
axes: {batch_size: [8, 16]}
fixed: {model: mlp, device: cuda}
)");
  ASSERT_EQ(jobs_in("queued"), 2);
  // Given time to be (wrongly) assigned, they stay queued.
  EXPECT_FALSE(wait_for([&] { return jobs_in("queued") != 2; }, 3s));
  EXPECT_TRUE(status().at("agents").at(0).at("running").empty());
}

TEST_F(Sweeps, GpuCountsFitAndNoGpuIsEverSharedOnSimulatedGpuNodes) {
  start_coordinator();
  boost::asio::io_context io;
  const wire::Endpoint coordinator{"127.0.0.1", static_cast<uint16_t>(port_)};
  simulation::SimulatedAgent node_a(io, coordinator, "gpu-a", 4, 150ms), node_b(io, coordinator, "gpu-b", 4, 150ms);
  node_a.start();
  node_b.start();
  auto work = boost::asio::make_work_guard(io);
  std::thread network([&] { io.run(); });
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 2; }, 15s));
  submit(R"(
name: multi-gpu
axes: {gpus: [1, 2, 3, 4]}
fixed: {model: mlp, batch_size: 8, device: cuda}
repeats: 4
node_exclusive: false
)");
  // A job needing more GPUs than any node has stays queued.
  submit("name: too-big\naxes: {gpus: [5]}\nfixed: {model: mlp, batch_size: 8, device: cuda}\n");
  // Across two nodes: this agent reserves its share, 4 of the 8 GPUs.
  submit(
      "name: two-nodes\naxes: {gpus: [8]}\nfixed: {model: mlp, batch_size: 8, device: cuda, hosts: [gpu-a:4, "
      "gpu-b:4]}\n");
  const bool done = sweep_ends("done", 60s, 0);
  const bool two_nodes_done = wait_for([&] { return jobs_in("done", 2) == 1; }, 30s);
  const auto too_big_queued = jobs_in("queued", 1);
  boost::asio::post(io, [&] {
    node_a.stop();
    node_b.stop();
    work.reset();
  });
  network.join();
  ASSERT_TRUE(done) << status().dump();
  EXPECT_EQ(too_big_queued, 1);
  EXPECT_TRUE(two_nodes_done);
  for (const auto* node : {&node_a, &node_b}) {
    EXPECT_EQ(node->stats().gpu_conflicts, 0u);
    EXPECT_LE(node->stats().max_gpus_in_use, 4u);
  }
  EXPECT_EQ(node_a.stats().completed + node_b.stats().completed, 17u);
  // Not node-exclusive: small jobs shared a node at least once.
  EXPECT_GT(std::max(node_a.stats().max_jobs_at_once, node_b.stats().max_jobs_at_once), 1u);
}

TEST_F(Sweeps, CancelKillsTheRunningJobAndDropsTheQueue) {
  start_coordinator();
  start_agents(1);
  const auto pid_file = directory_ / "runner.pid";
  submit(R"(
name: doomed
axes: {batch_size: [1, 2, 3]}
fixed: {model: mlp, labels: {sleep: "600", pid_file: ")" +
         pid_file.string() + R"("}}
)");
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(pid_file) && jobs_in("running") == 1; }, 15s));
  pid_t runner = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        std::ifstream(pid_file) >> runner;
        return runner > 0;
      },
      5s));
  const auto cancelled = torchsweep({"cancel", "doomed", "--coordinator", endpoint()});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_EQ(cancelled.out, "cancelled 3 jobs\n");
  EXPECT_EQ(sweep_state(), "cancelled");
  EXPECT_EQ(jobs_in("cancelled"), 3);
  EXPECT_TRUE(wait_for([&] { return ::kill(runner, 0) != 0; }, 10s)) << "the runner survived its cancel";
  // Cancelling what does not exist is an error that names it.
  const auto unknown = torchsweep({"cancel", "no-such-sweep", "--coordinator", endpoint()});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no-such-sweep"), std::string::npos);
}

TEST_F(Sweeps, RestartedCoordinatorResumesTheSweepFromItsStore) {
  start_coordinator();
  start_agents(1);
  submit(R"(
name: resumable
axes: {batch_size: [1, 2, 3, 4, 5, 6]}
fixed: {model: mlp, labels: {sleep: "0.3"}}
)");
  ASSERT_TRUE(wait_for([&] { return jobs_in("done") >= 2; }, 30s));
  const int port = port_;
  coordinator_->signal(SIGKILL);
  coordinator_->wait_exit(10s);
  start_coordinator(port);  // the agent reconnects; the spool redelivers what finished meanwhile
  ASSERT_TRUE(sweep_ends("done", 60s)) << status().dump();
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 6u);
  EXPECT_TRUE(std::all_of(stored.begin(), stored.end(), [](const auto& entry) { return entry.second == 1; }));
}

TEST_F(Sweeps, AModelNoRegisteredRunnerRunsIsRefusedAtSubmitAndAnUnknownRunnerWarns) {
  start_coordinator();
  const auto worker = std::filesystem::path(TS_TORCHSWEEP_BINARY).parent_path() / "torchsweep-worker";
  start_agent("a1", {"--runner", "libtorch=" + worker.string()});
  ASSERT_TRUE(wait_for([&] { return !status().at("agents").empty(); }, 20s));
  const auto typo = write_file("typo.yaml", "name: typo\naxes:\n  model: [mlp, nosuch]\nfixed: {batch_size: 8}\n");
  const auto refused = torchsweep({"submit", typo.string(), "--coordinator", endpoint()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("model: no runner 'libtorch' can run model 'nosuch'"), std::string::npos) << refused.err;
  EXPECT_TRUE(status().at("sweeps").empty());
  // A runner no agent has reported (a nightly submitted before its agents start): queued, with a warning.
  const auto later =
      write_file("later.yaml", "name: later\naxes:\n  model: [mlp]\nfixed: {batch_size: 8, runner: jax}\n");
  const auto queued = torchsweep({"submit", later.string(), "--coordinator", endpoint()});
  EXPECT_EQ(queued.exit_code, 0) << queued.err;
  EXPECT_NE(queued.err.find("warning: no runner 'jax' known"), std::string::npos) << queued.err;
  EXPECT_EQ(jobs_in("queued"), 1);
}

TEST_F(Sweeps, BadSweepFilesAreRefusedWithTheirPathAndNothingIsQueued) {
  start_coordinator();
  const auto file = write_file("bad.yaml", "name: bad\naxes:\n  batch_size: [8, 16, -1]\nfixed: {model: mlp}\n");
  const auto finished = torchsweep({"submit", file.string(), "--coordinator", endpoint()});
  EXPECT_EQ(finished.exit_code, 2);
  EXPECT_NE(finished.err.find("bad.yaml: axes.batch_size[2]"), std::string::npos) << finished.err;
  EXPECT_TRUE(status().at("sweeps").empty());
}

TEST_F(Sweeps, AGenerationSweepThroughRealProcessesIsStoredAndQueriedByItsAxes) {
  // The real runners, registered by path beside torchsweep, run by a real agent process.
  const auto bin = std::filesystem::path(TS_TORCHSWEEP_BINARY).parent_path();
  start_coordinator();
  start_agent("node-0", {"--runner", "libtorch=" + (bin / "torchsweep-worker").string(), "--runner",
                         "torch-compile=" + (bin / "torchsweep-torch-compile").string()});
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 60s));
  submit(R"(
name: tiny-generate
axes: {runner: [libtorch, torch-compile], mode: [eager, compiled], new_tokens: [4, 6]}
exclude: [{runner: libtorch, mode: compiled}]
fixed: {model: gpt, task: generate, batch_size: 2, vocab: 256, width: 64, heads: 4, depth: 2, seq_len: 32,
        prompt_len: 8, epochs: 2, warmup: 1, threads: 1}
)");
  ASSERT_TRUE(sweep_ends("done", 300s)) << status().dump();
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM results WHERE status = 'ok' AND task = 'generate' AND seq_len = 32 AND "
                       "prompt_len = 8 AND prefill_s > 0 AND decode_p50_s <= decode_p99_s AND tokens_per_s > 0 AND "
                       "kv_cache_bytes > 0 AND mfu IS NULL"),
            "6\n");
  // The gate: compiled greedy tokens equal eager ones; eager runs are not compared.
  EXPECT_EQ(store_rows("SELECT mode_ran, tokens_match FROM results ORDER BY mode_ran, runner, new_tokens"),
            "compiled|1\ncompiled|1\neager|\neager|\neager|\neager|\n");
  // Every runner generated the same tokens from the same seed.
  EXPECT_EQ(store_rows("SELECT COUNT(DISTINCT json_extract(document, '$.generation.tokens')) FROM result_documents"),
            "2\n");  // one list per new_tokens
  const auto query = torchsweep(
      {"query", "--db", db().string(), "--metric", "decode_latency,decode_p99,prefill_time", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  const auto rows = nlohmann::json::parse(query.out);
  ASSERT_EQ(rows.size(), 6u) << query.out;  // new_tokens and prompt_len among the axes: nothing pooled
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("prompt_len"), 8) << row.dump();
    EXPECT_TRUE(row.at("new_tokens") == 4 || row.at("new_tokens") == 6) << row.dump();
    EXPECT_GT(row.at("decode_p50_ms").get<double>(), 0.0) << row.dump();
    EXPECT_LE(row.at("decode_p50_ms").get<double>(), row.at("decode_p99_ms").get<double>()) << row.dump();
  }
}

}  // namespace
}  // namespace ts
