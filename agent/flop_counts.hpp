#pragma once
// FLOPs of a job's model for a runner that counts none (the LibTorch
// worker's torchscript:FILE, docs/models.md): counted by another runner of
// the same environment (runners.json's flops_counted_by: the torch.compile
// runner's --count-flops, torch.utils.flop_counter as it counts its own
// models), once per (counting command, model, model file, shape) for the
// agent's life, so a sweep's repeats and modes pay for one count.
#include <boost/asio.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ts::agent {

namespace asio = boost::asio;

// Whether a successful result lacks the FLOPs its efficiency needs: a model
// without a formula (shared/models/flops.hpp) and no execution.counted_flops.
bool lacks_counted_flops(const nlohmann::json& result);

struct FlopCount {
  std::optional<nlohmann::json> counted;  // execution.counted_flops, counted_by set
  std::string problem;                    // why not, when not
};

class FlopCounts {
 public:
  // The count of `job` (the job document the agent ran, its runner the
  // counting one) by `command` (the counting runner's, runner_command), in
  // `directory`; `counted_by` names the runner and environment in the result.
  asio::awaitable<FlopCount> count(nlohmann::json job, std::vector<std::string> command, std::string counted_by,
                                   std::filesystem::path directory);

 private:
  std::map<std::string, nlohmann::json> known_;  // key() -> counted_flops
};

}  // namespace ts::agent
