#include "coordinator/scheduler.hpp"

#include <gtest/gtest.h>

namespace ts::coordinator {
namespace {

AgentResources cpu_agent(const std::string& name, std::map<std::string, std::string> labels = {}) {
  return {name, {}, {"libtorch"}, std::move(labels), {}};
}

AgentResources gpu_agent(const std::string& name, int count, const std::string& gpu = "NVIDIA H100 80GB HBM3",
                         int64_t memory = 80'000'000'000) {
  AgentResources agent{name, {}, {"libtorch"}, {}, {}};
  for (int i = 0; i < count; ++i) agent.gpus.push_back({i, gpu, memory});
  return agent;
}

SchedulableJob job(const std::string& id, int64_t ordinal = 0) {
  SchedulableJob out;
  out.job_id = id;
  out.sweep_id = "s";
  out.config_key = id;
  out.pin_key = id;
  out.ordinal = ordinal;
  return out;
}

SchedulableJob gpu_job(const std::string& id, int64_t gpus, bool exclusive = false, int64_t ordinal = 0) {
  auto out = job(id, ordinal);
  out.uses_gpus = true;
  out.gpus = gpus;
  out.node_exclusive = exclusive;
  return out;
}

std::vector<std::string> ids(const std::vector<Assignment>& assignments) {
  std::vector<std::string> out;
  for (const auto& assignment : assignments) out.push_back(assignment.job_id + "@" + assignment.agent);
  return out;
}

using Ids = std::vector<std::string>;

TEST(Scheduler, NodeExclusiveJobsRunOneAtATimePerAgentInOrdinalOrder) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("a"));
  for (int i = 0; i < 3; ++i) scheduler.enqueue(job("j" + std::to_string(i), i));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"j0@a"});
  EXPECT_TRUE(scheduler.schedule().empty());  // a is busy
  scheduler.release("j0");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"j1@a"});
}

TEST(Scheduler, HigherPriorityFirstThenOlderSweeps) {
  Scheduler scheduler;
  auto late_urgent = job("urgent");
  late_urgent.priority = 10;
  late_urgent.sweep_sequence = 2;
  auto old = job("old");
  old.sweep_sequence = 1;
  auto newer = job("newer");
  newer.sweep_sequence = 2;
  scheduler.enqueue(newer);
  scheduler.enqueue(old);
  scheduler.enqueue(late_urgent);
  scheduler.add_agent(cpu_agent("a"));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"urgent@a"});
  scheduler.release("urgent");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"old@a"});
}

TEST(Scheduler, NeverTwoJobsOnOneGpuAndGpuCountsAreHonoured) {
  Scheduler scheduler;
  scheduler.add_agent(gpu_agent("node", 4));
  scheduler.enqueue(gpu_job("three", 3, false, 0));
  scheduler.enqueue(gpu_job("two", 2, false, 1));
  scheduler.enqueue(gpu_job("one", 1, false, 2));
  const auto first = scheduler.schedule();
  ASSERT_EQ(ids(first), (Ids{"three@node", "one@node"}));  // two does not fit beside three
  EXPECT_EQ(first[0].gpus, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(first[1].gpus, (std::vector<int64_t>{3}));
  scheduler.release("three");
  const auto second = scheduler.schedule();
  ASSERT_EQ(ids(second), Ids{"two@node"});
  EXPECT_EQ(second[0].gpus, (std::vector<int64_t>{0, 1}));
}

TEST(Scheduler, GpuJobsNeverGoToCpuOnlyAgents) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("cpu"));
  scheduler.enqueue(gpu_job("needs-gpu", 1));
  EXPECT_TRUE(scheduler.schedule().empty());
  EXPECT_TRUE(scheduler.is_queued("needs-gpu"));
  scheduler.add_agent(gpu_agent("gpu", 1));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"needs-gpu@gpu"});
}

TEST(Scheduler, GpuTypeMemoryLabelsAndRunnerMustFit) {
  Scheduler scheduler;
  scheduler.add_agent(gpu_agent("a100", 2, "NVIDIA A100-SXM4-40GB", 40'000'000'000));
  scheduler.add_agent(gpu_agent("h100", 2));
  auto h100_only = gpu_job("h100-only", 1, false, 0);
  h100_only.requirements.gpu_type = "H100";
  auto big = gpu_job("big-memory", 1, false, 1);
  big.requirements.min_gpu_memory_gb = 60;
  auto labelled = gpu_job("labelled", 1);
  labelled.requirements.labels = {{"rack", "b"}};
  auto other_runner = gpu_job("other-runner", 1);
  other_runner.runner = "torch-compile";
  for (const auto& j : {h100_only, big, labelled, other_runner}) scheduler.enqueue(j);
  EXPECT_EQ(ids(scheduler.schedule()), (Ids{"h100-only@h100", "big-memory@h100"}));
  EXPECT_TRUE(scheduler.is_queued("labelled"));
  EXPECT_TRUE(scheduler.is_queued("other-runner"));
  auto rack_b = gpu_agent("rack-b", 1);
  rack_b.labels = {{"rack", "b"}};
  rack_b.runners.insert("torch-compile");
  scheduler.add_agent(rack_b);
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"labelled@rack-b"});
}

TEST(Scheduler, AJobWithAnEnvGoesOnlyToAnAgentOfferingItsRunnerThere) {
  Scheduler scheduler;
  auto old_torch = cpu_agent("old");
  old_torch.runners.insert("torch-compile");
  old_torch.placements = {{"torch-compile", "system"}};
  scheduler.add_agent(old_torch);
  auto new_torch = job("new-torch");
  new_torch.runner = "torch-compile";
  new_torch.env = "torch-2.15";
  auto own = job("own", 1);
  own.runner = "torch-compile";
  scheduler.enqueue(new_torch);
  scheduler.enqueue(own);
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"own@old"});  // no env: the runner's own, which old has
  scheduler.release("own");
  EXPECT_TRUE(scheduler.schedule().empty());
  EXPECT_TRUE(scheduler.is_queued("new-torch"));
  auto both = cpu_agent("both");
  both.placements = {{"torch-compile", "system"}, {"torch-compile", "torch-2.15"}};
  scheduler.add_agent(both);
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"new-torch@both"});
}

TEST(Scheduler, NothingRunsBesideANodeExclusiveJob) {
  Scheduler scheduler;
  scheduler.add_agent(gpu_agent("node", 8));
  scheduler.enqueue(gpu_job("exclusive", 1, /*exclusive=*/true));
  auto shared = gpu_job("shared", 1);
  shared.ordinal = 1;
  scheduler.enqueue(shared);
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"exclusive@node"});
  scheduler.release("exclusive");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"shared@node"});
  // ...and an exclusive job waits for the agent to empty.
  auto exclusive2 = gpu_job("exclusive2", 1, true);
  exclusive2.ordinal = 2;
  scheduler.enqueue(exclusive2);
  EXPECT_TRUE(scheduler.schedule().empty());
}

TEST(Scheduler, PinnedRepeatsStayOnTheFirstAgent) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("a"));
  scheduler.add_agent(cpu_agent("b"));
  std::vector<SchedulableJob> repeats;
  for (int r = 0; r < 3; ++r) {
    auto j = job("cfg-r" + std::to_string(r), r);
    j.config_key = "cfg";
    j.pin_key = "cfg";
    j.pinned = true;
    scheduler.enqueue(j);
  }
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r0@a"});  // b may not take the next repeat
  scheduler.release("cfg-r0");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r1@a"});
  // The pin goes when its agent goes.
  EXPECT_EQ(scheduler.remove_agent("a"), std::vector<std::string>{"cfg-r1"});
  scheduler.requeue("cfg-r1");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r1@b"});
}

// pairing (docs/noise.md): a pair's two configurations share a pin, so
// both run on the agent that took the first of them, in queue order.
TEST(Scheduler, APairsConfigurationsStayOnTheAgentThatRanTheFirstOfThem) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("a"));
  scheduler.add_agent(cpu_agent("b"));
  int64_t ordinal = 0;
  for (const std::string side : {"eager", "compiled"}) {
    auto j = job(side, ordinal++);
    j.pin_key = "pair";
    j.pinned = true;
    scheduler.enqueue(j);
  }
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"eager@a"});  // b may not take the other side
  scheduler.release("eager");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"compiled@a"});
}

// calibration: {rounds, nodes: 2} (docs/noise.md): a configuration's rounds
// alternate between two node slots, each pinned to a different agent.
TEST(Scheduler, ACalibrationsNodeSlotsOfOneConfigurationTakeDifferentAgents) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("a"));
  for (int r = 0; r < 4; ++r) {
    auto j = job("cfg-r" + std::to_string(r), r);
    j.pin_key = "cfg node " + std::to_string(r % 2);
    j.spread_key = "cfg";
    j.pinned = true;
    scheduler.enqueue(j);
  }
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r0@a"});
  scheduler.release("cfg-r0");
  // Slot 1 may not join slot 0 on a: it waits for an agent of its own, and
  // slot 0's next round runs meanwhile.
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r2@a"});
  scheduler.release("cfg-r2");
  scheduler.add_agent(cpu_agent("b"));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r1@b"});
  scheduler.release("cfg-r1");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"cfg-r3@b"});
}

TEST(Scheduler, RemovedAgentGivesBackItsJobsAndRequeueCountsAttempts) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("a"));
  scheduler.enqueue(job("j"));
  EXPECT_EQ(scheduler.schedule().at(0).attempt, 1);
  EXPECT_EQ(scheduler.remove_agent("a"), std::vector<std::string>{"j"});
  scheduler.requeue("j");
  scheduler.add_agent(cpu_agent("b"));
  const auto again = scheduler.schedule();
  ASSERT_EQ(ids(again), Ids{"j@b"});
  EXPECT_EQ(again[0].attempt, 2);
}

TEST(Scheduler, CpuJobsTakeOneSlotPerAgentWhenNotExclusive) {
  Scheduler scheduler;
  scheduler.add_agent(gpu_agent("node", 1));
  for (const char* id : {"cpu1", "cpu2"}) {
    auto j = job(id);
    j.node_exclusive = false;
    scheduler.enqueue(j);
  }
  scheduler.enqueue(gpu_job("gpu", 1));
  EXPECT_EQ(ids(scheduler.schedule()), (Ids{"cpu1@node", "gpu@node"}));
}

SchedulableJob multi_node_job(const std::string& id, std::vector<std::string> hosts, int64_t ordinal = 0) {
  auto out = job(id, ordinal);
  out.gpus = 2;
  out.hosts = std::move(hosts);
  return out;
}

TEST(Scheduler, AMultiNodeJobRunsFromOneOfItsHostsAndKeepsTheOthersFree) {
  Scheduler scheduler;
  for (const char* name : {"n1", "n2", "n3"}) scheduler.add_agent(cpu_agent(name));
  scheduler.enqueue(multi_node_job("two-nodes", {"n2:1", "n3"}));
  for (int i = 1; i <= 3; ++i) scheduler.enqueue(job("single" + std::to_string(i), i));
  // Launched from one of its hosts (n2); n3 runs its second rank and takes nothing else.
  EXPECT_EQ(ids(scheduler.schedule()), (Ids{"single1@n1", "two-nodes@n2"}));
  scheduler.release("single1");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"single2@n1"});
  scheduler.release("two-nodes");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"single3@n2"});
}

TEST(Scheduler, AMultiNodeJobIsNotStarvedByLaterJobsOnItsHosts) {
  Scheduler scheduler;
  for (const char* name : {"n1", "n2"}) scheduler.add_agent(cpu_agent(name));
  scheduler.enqueue(job("first", 0));
  scheduler.enqueue(multi_node_job("two-nodes", {"n1", "n2"}, 1));
  scheduler.enqueue(job("later", 2));
  // n2 could run `later` now, but it waits for the multi-node job queued before it.
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"first@n1"});
  scheduler.release("first");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"two-nodes@n1"});
}

TEST(Scheduler, AnAgentLostByAMultiNodeJobsOtherHostOrphansNothing) {
  Scheduler scheduler;
  for (const char* name : {"n1", "n2"}) scheduler.add_agent(cpu_agent(name));
  scheduler.enqueue(multi_node_job("two-nodes", {"n1", "n2"}));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"two-nodes@n1"});
  EXPECT_TRUE(scheduler.remove_agent("n2").empty());  // its launcher, n1, still runs it
  scheduler.add_agent(cpu_agent("n2"));               // back while the job runs: still kept free
  scheduler.enqueue(job("single"));
  EXPECT_TRUE(scheduler.schedule().empty());
  scheduler.release("two-nodes");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"single@n1"});
}

TEST(Scheduler, HostsOfAMultiNodeJobNoneCanLaunchAreNotHeldForIt) {
  Scheduler scheduler;
  scheduler.add_agent({"n1", {}, {"tensorflow"}, {}, {}});
  scheduler.add_agent({"n2", {}, {"tensorflow"}, {}, {}});
  scheduler.enqueue(multi_node_job("two-nodes", {"n1", "n2"}, 0));  // libtorch: neither has it
  auto later = job("later", 1);
  later.runner = "tensorflow";
  scheduler.enqueue(later);
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"later@n1"});
}

TEST(Scheduler, AMultiNodeJobWhoseHostsRunNoAgentGoesToAnyAgent) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("launcher"));
  scheduler.enqueue(multi_node_job("two-hosts", {"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"two-hosts@launcher"});
}

TEST(Scheduler, AJobBehindManyThatNoAgentCanTakeStillRunsInQueueOrder) {
  Scheduler scheduler;
  scheduler.add_agent(cpu_agent("cpu"));
  for (int i = 0; i < 1000; ++i) scheduler.enqueue(gpu_job("stuck" + std::to_string(i), 1, false, i));
  scheduler.enqueue(job("late", 2000));
  scheduler.enqueue(job("early", 1500));
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"early@cpu"});
  scheduler.release("early");
  EXPECT_EQ(ids(scheduler.schedule()), Ids{"late@cpu"});
  EXPECT_EQ(scheduler.queued(), 1000u);
}

}  // namespace
}  // namespace ts::coordinator
