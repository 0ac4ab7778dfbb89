// How the agent starts a multi-rank job's ranks (agent/rank_launch.hpp).
#include "agent/rank_launch.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace ts::agent {
namespace {

bool forwards(const std::vector<std::string>& command, const std::string& name) {
  for (std::size_t i = 0; i + 1 < command.size(); ++i) {
    if (command[i] == "-x" && command[i + 1] == name) return true;
  }
  return false;
}

// The agent names its own GPUs by UUID in CUDA_VISIBLE_DEVICES; another node
// has none of them, so its ranks would see no GPU at all (docs/multi-gpu.md).
TEST(RankLaunch, ThisNodesVisibleGpusAreNeverForwardedToOtherNodes) {
  const std::map<std::string, std::string> environment{
      {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
      {"CUDA_VISIBLE_DEVICES", "GPU-8f1c7a2e-0000-0000-0000-000000000001,GPU-8f1c7a2e-0000-0000-0000-000000000002"}};
  const nlohmann::json job{
      {"model", "resnet50"}, {"batch_size", 8}, {"device", "cuda"}, {"gpus", 4}, {"hosts", {"a:2", "b:2"}}};
  const auto command = mpirun_command(job, RankLaunchSettings{}, forwarded_to_ranks(environment));
  EXPECT_FALSE(forwards(command, "CUDA_VISIBLE_DEVICES"));
  EXPECT_TRUE(forwards(command, "CUDA_DEVICE_ORDER"));  // the same numbering everywhere
  EXPECT_TRUE(forwards(command, "TORCHSWEEP_PROGRESS_FILE"));
  EXPECT_TRUE(forwards(command, "TORCHSWEEP_DIE_WITH_PARENT"));
  const auto hosts = std::find(command.begin(), command.end(), "--host");
  ASSERT_NE(hosts, command.end());
  EXPECT_EQ(*(hosts + 1), "a:2,b:2");
}

TEST(RankLaunch, ACpuJobForwardsOnlyWhatEveryRankNeeds) {
  EXPECT_EQ(forwarded_to_ranks({}),
            (std::vector<std::string>{"TORCHSWEEP_PROGRESS_FILE", "TORCHSWEEP_DIE_WITH_PARENT"}));
}

}  // namespace
}  // namespace ts::agent
