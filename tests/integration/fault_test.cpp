// Faults on 127.0.0.1: agents and the coordinator killed with SIGKILL at
// seeded random points of a 200-job sweep and restarted; at the end every
// job has exactly one stored result. And runners that hang are killed by
// their timeout and recorded as failed with the reason.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <random>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using testing::wait_for;

class Faults : public testing::Cluster {
 protected:
  void start_node(int index) {
    const auto name = "node-" + std::to_string(index);
    // The same name and work directory as before a kill: its spool survives.
    nodes_[index] = &start_agent(name, {"--runner", "libtorch=" + runner_.string()});
  }
  std::filesystem::path runner_;
  std::map<int, testing::ChildProcess*> nodes_;
};

TEST_F(Faults, KilledAgentsAndCoordinatorLoseNoResultAndStoreNoneTwice) {
  runner_ = fake_runner();
  start_coordinator();
  const int port = port_;
  for (int i = 0; i < 3; ++i) start_node(i);
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 3; }, 15s));
  const auto sweep = write_file("faults.yaml", R"(
name: faults
axes:
  batch_size: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
               26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]
  labels: [{sleep: "0.05"}, {sleep: "0.15"}]
fixed: {model: mlp}
repeats: 2
max_attempts: 10
)");
  const auto submitted = torchsweep({"submit", sweep.string(), "--coordinator", endpoint()});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;

  std::mt19937 random(20261130);  // the same kills on every run
  for (int kill = 0; kill < 8; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400 + random() % 800));
    if (random() % 3 == 0) {
      coordinator_->signal(SIGKILL);
      coordinator_->wait_exit(10s);
      start_coordinator(port);
    } else {
      const int index = static_cast<int>(random() % 3);
      nodes_[index]->signal(SIGKILL);
      nodes_[index]->wait_exit(10s);
      start_node(index);
    }
  }
  ASSERT_TRUE(wait_for([&] { return sweep_state() == "done"; }, 120s)) << status().dump();
  EXPECT_EQ(jobs_in("done"), 200);
  const auto stored = results_per_job();
  EXPECT_EQ(stored.size(), 200u);
  for (const auto& [job, count] : stored) EXPECT_EQ(count, 1) << job;
}

TEST_F(Faults, HangingRunnerIsKilledByItsTimeoutAndTheSweepGoesOn) {
  runner_ = fake_runner();
  start_coordinator();
  start_node(0);
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  const auto sweep = write_file("hang.yaml", R"(
name: hang
axes:
  labels: [{sleep: "600"}, {sleep: "0"}]
fixed: {model: mlp, batch_size: 4, timeout_s: 1}
max_attempts: 1
order: grouped
)");
  ASSERT_EQ(torchsweep({"submit", sweep.string(), "--coordinator", endpoint()}).exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return sweep_state() == "done"; }, 30s)) << status().dump();
  EXPECT_EQ(jobs_in("failed"), 1);
  EXPECT_EQ(jobs_in("done"), 1);
  const auto jobs =
      testing::run_program({"sqlite3", db().string(), "SELECT state, last_error FROM jobs ORDER BY ordinal"});
  if (jobs.exit_code == 0) {  // the sqlite3 shell is in the build root
    EXPECT_NE(jobs.out.find("failed|timed out after 1"), std::string::npos) << jobs.out;
  }
}

}  // namespace
}  // namespace ts
