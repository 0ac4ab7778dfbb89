#include "agent/rank_launch.hpp"

#include <unistd.h>

#include <cstdlib>

#include "shared/job_fields.hpp"
#include "shared/runner_contract.hpp"

namespace ts::agent {

bool needs_rank_launch(const nlohmann::json& job) {
  return job_fields::get<int64_t>(job, "gpus") > 1 || job.contains("hosts");
}

std::vector<std::string> forwarded_to_ranks(const std::map<std::string, std::string>& environment) {
  std::vector<std::string> forwarded{std::string(runner_contract::progress_variable), "TORCHSWEEP_DIE_WITH_PARENT"};
  if (environment.contains("CUDA_DEVICE_ORDER")) forwarded.emplace_back("CUDA_DEVICE_ORDER");
  return forwarded;
}

std::vector<std::string> mpirun_command(const nlohmann::json& job, const RankLaunchSettings& settings,
                                        const std::vector<std::string>& forwarded) {
  const auto ranks = job_fields::get<int64_t>(job, "gpus");
  const bool on_gpus = job_fields::get<std::string>(job, "device").starts_with("cuda");
  std::vector<std::string> command{settings.mpirun, "-np", std::to_string(ranks)};
  if (::geteuid() == 0) command.emplace_back("--allow-run-as-root");
  // The job's resolution sized each rank's thread pool (cores / ranks on a
  // node); Open MPI's default binding would pin each rank to one core.
  command.insert(command.end(), {"--bind-to", "none"});
  // CPU ranks may outnumber cores (tests on small machines); GPU ranks must
  // not outnumber the slots, one per GPU.
  if (!on_gpus) command.emplace_back("--oversubscribe");
  if (!job.contains("hosts") && std::getenv("SLURM_JOB_ID") == nullptr) {
    // One node: shared memory between ranks; TCP would only look for
    // interfaces to reach other nodes.
    command.insert(command.end(), {"--mca", "btl", "self,sm"});
  }
  if (job.contains("hosts")) {
    std::string hosts;
    for (const auto& host : job.at("hosts")) hosts += (hosts.empty() ? "" : ",") + host.get<std::string>();
    command.insert(command.end(), {"--host", hosts});
  }
  for (const auto& name : forwarded) command.insert(command.end(), {"-x", name});
  return command;
}

}  // namespace ts::agent
