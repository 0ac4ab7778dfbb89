// Faults on 127.0.0.1: agents and the coordinator killed with SIGKILL and
// restarted, agents frozen with SIGSTOP and thawed, at seeded random points
// of 200-job sweeps; at the end every job has exactly one stored result and
// no two runners of a job were ever alive at once. And runners that hang
// are killed by their timeout and recorded as failed with the reason.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Faults : public testing::Cluster {
 protected:
  void start_node(int index) {
    const auto name = "node-" + std::to_string(index);
    // The same name and work directory as before a kill: its spool survives.
    nodes_[index] = &start_agent(name, {"--runner", "libtorch=" + runner_.string()});
  }
  std::filesystem::path runner_;
  std::map<int, simulation::ChildProcess*> nodes_;
};

// The state of the newest sweep called `name`, per the coordinator.
std::string state_of(const nlohmann::json& status, const std::string& name) {
  std::string state = "<none>";
  if (status.is_null()) return state;
  for (const auto& sweep : status.at("sweeps")) {
    if (sweep.at("name") == name) state = sweep.at("state");
  }
  return state;
}

TEST_F(Faults, ChaosOfKillsFreezesAndRestartsLosesNoResultAndStoresNoneTwice) {
  runner_ = fake_runner();
  start_coordinator();
  const int port = port_;
  for (int i = 0; i < 3; ++i) start_node(i);
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 3; }, 15s));
  // Rounds of one 200-job sweep each, seeded (the same faults on every
  // run), until TS_CHAOS_SECONDS (default 60) have passed.
  const char* budget_text = std::getenv("TS_CHAOS_SECONDS");
  const auto budget = std::chrono::seconds(budget_text ? std::atoi(budget_text) : 60);
  const auto started = std::chrono::steady_clock::now();
  for (std::uint32_t round = 0; round == 0 || std::chrono::steady_clock::now() - started < budget; ++round) {
    const auto name = "chaos-" + std::to_string(round);
    const auto sweep = write_file(name + ".yaml", "name: " + name + R"(
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
    std::mt19937 random(20261130 + round);
    for (int fault = 0; fault < 8; ++fault) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400 + random() % 800));
      const auto kind = random() % 4;
      const int index = static_cast<int>(random() % 3);
      if (kind == 0) {
        coordinator_->signal(SIGKILL);
        coordinator_->wait_exit(10s);
        start_coordinator(port);
      } else if (kind == 1) {
        nodes_[index]->signal(SIGKILL);
        nodes_[index]->wait_exit(10s);
        start_node(index);
      } else {
        // Frozen for up to 3 s: past the 3 missed heartbeats (1.5 s) that
        // drop it, within the 2 s grace after which another node could
        // take its job while its runner still runs (docs/operations.md).
        nodes_[index]->signal(SIGSTOP);
        std::this_thread::sleep_for(std::chrono::milliseconds(300 + random() % 2700));
        nodes_[index]->signal(SIGCONT);
      }
    }
    ASSERT_TRUE(wait_for([&] { return state_of(status(), name) == "done"; }, 120s)) << status().dump();
    const auto stored = results_per_job({"--sweep", name});
    EXPECT_EQ(stored.size(), 200u) << name;
    for (const auto& [job, count] : stored) EXPECT_EQ(count, 1) << job;
    ASSERT_EQ(violations(), "") << name;
  }
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
  const auto jobs = store_rows("SELECT state, last_error FROM jobs ORDER BY ordinal");
  EXPECT_NE(jobs.find("failed|timed out after 1"), std::string::npos) << jobs;
}

}  // namespace
}  // namespace ts
