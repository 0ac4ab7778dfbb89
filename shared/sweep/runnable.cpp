#include "shared/sweep/runnable.hpp"

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"

namespace ts::sweep {
namespace {

// The capability key of each checked job field ("models" for "model", ...).
const std::map<std::string, std::string>& checked_fields() {
  static const std::map<std::string, std::string> fields{
      {"model", "models"}, {"mode", "modes"}, {"precision", "precisions"}};
  return fields;
}

}  // namespace

KnownRunners known_runners(const std::vector<nlohmann::json>& capabilities) {
  KnownRunners known;
  for (const auto& agent : capabilities) {
    for (const auto& runner : agent.value("runners", std::vector<std::string>{})) known[runner];
    for (const auto& [field, key] : checked_fields()) {
      const auto listed = agent.value(key, nlohmann::json::object());
      for (const auto& [runner, values] : listed.items()) {
        for (const auto& value : values) known[runner][field].insert(value.get<std::string>());
      }
    }
  }
  return known;
}

std::vector<std::string> check_runnable(const Sweep& sweep, const KnownRunners& known, const std::string& source) {
  std::set<std::string> unknown_runners;
  for (const auto& job : sweep.jobs) {
    const auto runner = job_fields::get<std::string>(job.document, "runner");
    const auto found = known.find(runner);
    if (found == known.end()) {
      unknown_runners.insert(runner);
      continue;
    }
    for (const auto& [field, values] : found->second) {
      const auto value = job_fields::get<std::string>(job.document, field);
      if (values.empty() || values.contains(value)) continue;
      std::string runs;
      for (const auto& name : values) runs += (runs.empty() ? "" : ", ") + name;
      throw InvalidInput(field, "no runner '" + runner + "' can run " + field + " '" + value + "' (it runs " + runs +
                                    ", " + source + ")");
    }
  }
  std::vector<std::string> warnings;
  for (const auto& runner : unknown_runners) {
    warnings.push_back("no runner '" + runner + "' known (" + source + "), so its models are unchecked");
  }
  return warnings;
}

}  // namespace ts::sweep
