// Failures that must not pass silently, on 127.0.0.1: a store the
// coordinator cannot write (locked by another process past the busy
// timeout; a file-size limit standing in for a full disk) ends it with the
// SQLite error and exit code 5, and a restart resumes the sweep; SIGTERM of
// an agent leaves none of a two-rank job's ranks behind.
#include <gtest/gtest.h>
#include <signal.h>

#include "store/sqlite.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Failures : public testing::Cluster {
 protected:
  void SetUp() override {
    runner_ = fake_runner();
    reattach_grace_s_ = "1";
  }
  simulation::ChildProcess& start_node(const std::string& name = "a1") {
    return start_agent(name, {"--runner", "libtorch=" + runner_.string()});
  }
  void submit(const std::string& name, const std::string& batch_sizes, const std::string& sleep) {
    const auto sweep = write_file(name + ".yaml", "name: " + name + "\naxes: {batch_size: [" + batch_sizes +
                                                      "]}\nfixed: {model: mlp, labels: {sleep: \"" + sleep +
                                                      "\"}}\nmax_attempts: 5\n");
    const auto submitted = torchsweep({"submit", sweep.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
  std::string coordinator_log() const { return testing::slurp(directory_ / "coordinator.log"); }
  void expect_every_job_stored_once(std::size_t jobs) {
    ASSERT_TRUE(wait_for([&] { return sweep_state() == "done"; }, 60s)) << status().dump();
    EXPECT_EQ(jobs_in("done"), static_cast<int64_t>(jobs));
    const auto stored = results_per_job();
    EXPECT_EQ(stored.size(), jobs);
    for (const auto& [job, count] : stored) EXPECT_EQ(count, 1) << job;
  }
  std::filesystem::path runner_;
};

TEST_F(Failures, StoreLockedPastTheBusyTimeoutEndsTheCoordinatorAndARestartResumes) {
  start_coordinator();
  const int port = port_;
  auto& agent = start_node();
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  submit("locked", "4", "4");
  ASSERT_TRUE(wait_for([&] { return live_runners().size() == 1; }, 15s));
  {
    // Another process holds the write lock while the coordinator's
    // housekeeping must requeue the job of an agent that went silent.
    store::Database locker(db().string());
    locker.execute("BEGIN IMMEDIATE");
    agent.signal(SIGSTOP);
    const auto exit_code = coordinator_->wait_exit(30s);
    agent.signal(SIGCONT);
    ASSERT_TRUE(exit_code.has_value()) << "the coordinator went on without its store";
    EXPECT_EQ(*exit_code, 5);
    const auto log = coordinator_log();
    EXPECT_NE(log.find("database is locked"), std::string::npos) << log;
    EXPECT_NE(log.find("housekeeping"), std::string::npos) << log;
    locker.execute("ROLLBACK");
  }
  start_coordinator(port);  // the agent comes back with its attempt: reattached
  expect_every_job_stored_once(1);
}

TEST_F(Failures, DiskFullEndsTheCoordinatorAndARestartResumes) {
  start_coordinator();
  const int port = port_;
  submit("full", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20", "0.05");
  // A clean stop checkpoints the WAL into the store file: its size is then
  // all the store takes, and what the run writes next must fit above it.
  coordinator_->signal(SIGTERM);
  ASSERT_EQ(coordinator_->wait_exit(15s), 0);
  const auto limit = std::filesystem::file_size(db()) + 96 * 1024;
  coordinator_binary_prefix_ = {"/usr/bin/prlimit", "--fsize=" + std::to_string(limit), "--"};
  start_coordinator(port);
  coordinator_binary_prefix_.clear();
  start_node();
  const auto exit_code = coordinator_->wait_exit(60s);
  ASSERT_TRUE(exit_code.has_value()) << "the coordinator never hit its file-size limit: " << status().dump();
  EXPECT_EQ(*exit_code, 5);
  const auto log = coordinator_log();
  EXPECT_TRUE(log.find("disk is full") != std::string::npos || log.find("disk I/O error") != std::string::npos) << log;
  // SQLite rolled the batch back itself: no COMMIT of nothing is tried after it.
  EXPECT_EQ(log.find("cannot commit - no transaction is active"), std::string::npos) << log;
  start_coordinator(port);
  expect_every_job_stored_once(20);
}

TEST_F(Failures, SigtermOfAnAgentLeavesNoRankOfATwoRankJobBehind) {
  // Each rank records its pid and sleeps; neither arms a parent-death
  // signal, so only the agent's own shutdown can end them.
  const auto ranks = directory_ / "ranks";
  const auto rank_runner =
      write_file("rank_runner.py",
                 "#!/usr/bin/env python3\nimport os, sys, time\n"
                 "if '--version' in sys.argv or '--list-models' in sys.argv:\n    sys.exit(0)\nwith open('" +
                     ranks.string() +
                     "', 'a') as out:\n    out.write('%d\\n' % os.getpid())\n"
                     "time.sleep(600)\n");
  std::filesystem::permissions(rank_runner, std::filesystem::perms::owner_all);
  start_coordinator();
  auto& agent = start_agent("a1", {"--runner", "libtorch=" + rank_runner.string()});
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  const auto sweep = write_file("ranks.yaml", "name: ranks\naxes: {batch_size: [4]}\nfixed: {model: mlp, gpus: 2}\n");
  ASSERT_EQ(torchsweep({"submit", sweep.string(), "--coordinator", endpoint()}).exit_code, 0);
  const auto pids = [&] {
    std::vector<std::string> found;
    std::ifstream in(ranks);
    for (std::string pid; in >> pid;) found.push_back(pid);
    return found;
  };
  ASSERT_TRUE(wait_for([&] { return pids().size() == 2; }, 30s)) << testing::slurp(directory_ / "a1.log");
  agent.signal(SIGTERM);
  EXPECT_EQ(agent.wait_exit(15s), 0);
  const auto alive = [&] {
    std::vector<std::string> running;
    for (const auto& pid : pids()) {
      if (testing::slurp("/proc/" + pid + "/cmdline").find("rank_runner.py") != std::string::npos)
        running.push_back(pid);
    }
    return running;
  };
  EXPECT_TRUE(wait_for([&] { return alive().empty(); }, 10s)) << "rank " << alive().front() << " survived";
}

}  // namespace
}  // namespace ts
