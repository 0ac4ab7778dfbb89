// The two failures of docs/operations.md's "partitions and restarts", as a
// user met them on 127.0.0.1: an agent frozen across the coordinator's
// grace period, and an agent killed mid-job and restarted. Each must end
// with the sweep done, the job stored once, never two live runners of the
// job (the fake runner's lock is the witness) and no runner left behind.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Recovery : public testing::Cluster {
 protected:
  void SetUp() override {
    runner_ = fake_runner();
    reattach_grace_s_ = "1";
    start_coordinator();
  }
  simulation::ChildProcess& start_node() { return start_agent("a1", {"--runner", "libtorch=" + runner_.string()}); }
  void submit_long_job(const std::string& seconds) {
    const auto sweep =
        write_file("long.yaml", "name: long\naxes: {batch_size: [4]}\nfixed: {model: mlp, labels: {sleep: \"" +
                                    seconds + "\"}}\nmax_attempts: 3\n");
    const auto submitted = torchsweep({"submit", sweep.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
  void expect_done_once_and_nothing_left() {
    ASSERT_TRUE(wait_for([&] { return sweep_state() == "done"; }, 60s)) << status().dump();
    EXPECT_EQ(jobs_in("done"), 1);
    const auto stored = results_per_job();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored.begin()->second, 1);
    EXPECT_EQ(violations(), "");
    EXPECT_TRUE(wait_for([&] { return live_runners().empty(); }, 10s)) << live_runners().front();
  }
  std::filesystem::path runner_;
};

TEST_F(Recovery, AgentFrozenAcrossTheGracePeriodDoesNotHangTheSweep) {
  auto& agent = start_node();
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  submit_long_job("6");
  ASSERT_TRUE(wait_for([&] { return live_runners().size() == 1; }, 15s));
  agent.signal(SIGSTOP);
  // Frozen past 3 missed heartbeats and the grace: the job is queued again.
  const bool requeued = wait_for([&] { return agent_names().empty() && jobs_in("queued") == 1; }, 15s);
  agent.signal(SIGCONT);
  ASSERT_TRUE(requeued) << status().dump();
  expect_done_once_and_nothing_left();
}

TEST_F(Recovery, AgentKilledMidJobAndRestartedLeavesNoRunnerBeside) {
  auto* agent = &start_node();
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  submit_long_job("5");
  ASSERT_TRUE(wait_for([&] { return live_runners().size() == 1; }, 15s));
  agent->signal(SIGKILL);
  agent->wait_exit(10s);
  // Its runner dies with it (parent-death signal), before any restart.
  EXPECT_TRUE(wait_for([&] { return live_runners().empty(); }, 5s));
  agent = &start_node();  // same name and work directory: its next life
  expect_done_once_and_nothing_left();
}

}  // namespace
}  // namespace ts
