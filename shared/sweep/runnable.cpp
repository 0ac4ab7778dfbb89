#include "shared/sweep/runnable.hpp"

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"

namespace ts::sweep {

RunnerModels runner_models(const std::vector<nlohmann::json>& capabilities) {
  RunnerModels known;
  for (const auto& agent : capabilities) {
    for (const auto& runner : agent.value("runners", std::vector<std::string>{})) known[runner];
    const auto listed = agent.value("models", nlohmann::json::object());
    for (const auto& [runner, models] : listed.items()) {
      for (const auto& model : models) known[runner].insert(model.get<std::string>());
    }
  }
  return known;
}

std::vector<std::string> check_runnable(const Sweep& sweep, const RunnerModels& known, const std::string& source) {
  std::set<std::string> unknown_runners;
  for (const auto& job : sweep.jobs) {
    const auto runner = job_fields::get<std::string>(job.document, "runner");
    const auto model = job.document.at("model").get<std::string>();
    const auto found = known.find(runner);
    if (found == known.end()) {
      unknown_runners.insert(runner);
      continue;
    }
    const auto& models = found->second;
    if (models.empty() || models.contains(model)) continue;
    std::string runs;
    for (const auto& name : models) runs += (runs.empty() ? "" : ", ") + name;
    throw InvalidInput(
        "model", "no runner '" + runner + "' can run model '" + model + "' (it runs " + runs + ", " + source + ")");
  }
  std::vector<std::string> warnings;
  for (const auto& runner : unknown_runners) {
    warnings.push_back("no runner '" + runner + "' known (" + source + "), so its models are unchecked");
  }
  return warnings;
}

}  // namespace ts::sweep
