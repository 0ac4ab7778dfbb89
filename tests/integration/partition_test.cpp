// Real partitions, no signals: the coordinator in this test's own network
// namespace (ctest starts the binary under `unshare --net`), the agent in a
// second one (unshare again) behind a veth pair, and the link taken down.
// Only these namespaces' own addresses are ever used: nothing leaves them,
// and both vanish with their processes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "tests/support/cluster.hpp"
#include "tests/support/network_namespace.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;
using testing::ip_binary;
using testing::network_namespace;

constexpr const char* coordinator_address = "10.231.0.1";
constexpr const char* agent_address = "10.231.0.2";

class Partitions : public testing::Cluster {
 protected:
  void SetUp() override {
    // Off the loopback address the coordinator demands a token.
    ::setenv("TORCHSWEEP_TOKEN", "partition-test-token", 1);
    ip({"link", "set", "lo", "up"});
    runner_ = fake_runner();
    host_ = coordinator_address;
    // The agent's host: a network namespace of its own, which gets its end
    // of the veth pair from here, configures it and becomes the agent.
    const auto ip = ip_binary();
    agent_binary_prefix_ = {"/usr/bin/unshare",
                            "--net",
                            "--",
                            "/bin/sh",
                            "-c",
                            "for i in $(seq 200); do " + ip +
                                " link show ts-agent >/dev/null 2>&1 && break; sleep 0.05; done\n" + ip +
                                " link set lo up && " + ip + " addr add " + agent_address + "/24 dev ts-agent && " +
                                ip + " link set ts-agent up && exec \"$@\"",
                            "sh"};
    this->ip({"link", "add", "ts-coord", "type", "veth", "peer", "name", "ts-agent"});
    this->ip({"addr", "add", std::string(coordinator_address) + "/24", "dev", "ts-coord"});
    link("up");
    start_coordinator();
    auto& agent = start_agent("a1", {"--runner", "libtorch=" + runner_.string()});
    const auto pid = std::to_string(agent.pid());
    ASSERT_TRUE(wait_for([&] { return network_namespace(pid) != network_namespace("self"); }, 10s));
    this->ip({"link", "set", "ts-agent", "netns", pid});
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 20s)) << agent_log();
  }
  void ip(std::vector<std::string> args) {
    args.insert(args.begin(), ip_binary());
    const auto finished = testing::run_program(args);
    ASSERT_EQ(finished.exit_code, 0) << finished.err;
  }
  void link(const std::string& state) { ip({"link", "set", "ts-coord", state}); }
  std::string agent_log() const { return testing::slurp(directory_ / "a1.log"); }
  void submit_job(const std::string& seconds) {
    const auto sweep =
        write_file("cut.yaml", "name: cut\naxes: {batch_size: [4]}\nfixed: {model: mlp, labels: {sleep: \"" + seconds +
                                   "\"}}\nmax_attempts: 3\n");
    const auto submitted = torchsweep({"submit", sweep.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
  void expect_done_once() {
    ASSERT_TRUE(wait_for([&] { return sweep_state() == "done"; }, 60s)) << status().dump() << agent_log();
    const auto stored = results_per_job();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored.begin()->second, 1);
    EXPECT_TRUE(wait_for([&] { return live_runners().empty(); }, 10s));
  }
  std::filesystem::path runner_;
};

TEST_F(Partitions, LinkDownPastTheGraceStopsTheRunnerThereAndTheJobRunsOnceMore) {
  submit_job("8");
  ASSERT_TRUE(wait_for([&] { return live_runners().size() == 1; }, 15s));
  link("down");
  // Both sides notice within a few heartbeats: the coordinator drops the
  // agent and, after the grace, queues the job again; the agent, cut off
  // for half the grace, has stopped its runner by then.
  EXPECT_TRUE(wait_for([&] { return agent_names().empty() && jobs_in("queued") == 1; }, 15s)) << status().dump();
  EXPECT_TRUE(wait_for([&] { return live_runners().empty(); }, 10s)) << "the cut-off runner still runs";
  link("up");
  expect_done_once();
  EXPECT_EQ(store_rows("SELECT attempts FROM jobs"), "2\n");
}

TEST_F(Partitions, LinkDownLongAfterTheJobEndedDeliversItsOutcomeOnceAsSuperseded) {
  submit_job("1");
  ASSERT_TRUE(wait_for([&] { return live_runners().size() == 1; }, 15s));
  link("down");
  // No packet comes back: only the agent's read deadline can tell it.
  EXPECT_TRUE(wait_for([&] { return agent_log().find("timed out") != std::string::npos; }, 10s)) << agent_log();
  EXPECT_TRUE(wait_for([&] { return agent_names().empty() && jobs_in("queued") == 1; }, 15s)) << status().dump();
  // The partition lasts on, long past every timeout either side has
  // (keepalive, TCP user timeout, grace): the length of the fault, not a
  // wait for a condition.
  std::this_thread::sleep_for(20s);
  link("up");
  expect_done_once();
  // Attempt 1 ended during the partition, after the coordinator gave up on
  // it: delivered from the spool, kept there as superseded, not stored.
  EXPECT_EQ(store_rows("SELECT attempt FROM results"), "2\n");
  const auto superseded = directory_ / "work-a1" / "spool" / "superseded";
  EXPECT_TRUE(
      wait_for([&] { return std::filesystem::exists(superseded) && !std::filesystem::is_empty(superseded); }, 10s));
}

}  // namespace
}  // namespace ts
