#pragma once
// How a multi-rank job is started (docs/multi-gpu.md): the agent runs the
// runner under Open MPI's mpirun, one rank per GPU (or per CPU rank), and
// rank 0 writes the job's result. On one node each rank takes the GPU of its
// local rank among those the coordinator reserved (CUDA_VISIBLE_DEVICES);
// across nodes the job's `hosts` go to mpirun --host, and inside a Slurm
// allocation without `hosts` mpirun places ranks over the allocation.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::agent {

struct RankLaunchSettings {
  std::string mpirun = "mpirun";  // looked up on PATH
};

// Whether `job` needs several ranks: gpus > 1, or hosts given.
bool needs_rank_launch(const nlohmann::json& job);

// Of the variables the agent sets for a runner (`environment`, besides the
// progress file and the parent-death setting it always sets), those every
// rank gets through mpirun -x, remote ones included: CUDA_DEVICE_ORDER. Never
// CUDA_VISIBLE_DEVICES: it names this node's GPUs (by UUID), which no other
// node has; local ranks inherit it from mpirun, and a remote node's ranks
// keep that node's own (all its GPUs, or Slurm's share of them).
std::vector<std::string> forwarded_to_ranks(const std::map<std::string, std::string>& environment);

// The mpirun command line the runner goes after, for a job that
// needs_rank_launch; as root it adds --allow-run-as-root, which Open MPI
// demands of root. Environment variables named in `forwarded` are passed
// to every rank (-x), remote ones included.
std::vector<std::string> mpirun_command(const nlohmann::json& job, const RankLaunchSettings& settings,
                                        const std::vector<std::string>& forwarded);

}  // namespace ts::agent
