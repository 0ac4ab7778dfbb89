// Reads job documents as one JSON array on stdin and prints, for each,
// torchsweep's analytic FLOPs (shared/models/flops.hpp), so that the runner
// tests can hold them against torch.utils.flop_counter.
#include <iostream>
#include <nlohmann/json.hpp>

#include "shared/models/flops.hpp"

int main() {
  const auto jobs = nlohmann::json::parse(std::cin);
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& job : jobs) {
    const auto flops = ts::models::step_flops(job);
    answers.push_back({{"forward_per_sample", flops.forward_per_sample}, {"per_step", flops.per_step}});
  }
  std::cout << answers.dump() << "\n";
}
