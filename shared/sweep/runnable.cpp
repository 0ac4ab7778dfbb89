#include "shared/sweep/runnable.hpp"

#include "shared/closest_names.hpp"
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
    for (const auto& runner : agent.value("runners", std::vector<std::string>{})) known.runners[runner];
    for (const auto& [field, key] : checked_fields()) {
      const auto listed = agent.value(key, nlohmann::json::object());
      for (const auto& [runner, values] : listed.items()) {
        for (const auto& value : values) known.runners[runner][field].insert(value.get<std::string>());
      }
    }
    const auto environments = agent.value("environments", nlohmann::json::object());
    for (const auto& [name, environment] : environments.items()) {
      auto& runners = known.environments[name];
      for (const auto& [runner, versions] : environment.at("runners").items()) runners.insert(runner);
    }
  }
  return known;
}

std::vector<std::string> check_runnable(const Sweep& sweep, const KnownRunners& known, const std::string& source) {
  std::set<std::string> unknown_runners;
  bool environments_unchecked = false;
  const auto listed = [](const auto& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("none") : text;
  };
  for (const auto& job : sweep.jobs) {
    const auto runner = job_fields::get<std::string>(job.document, "runner");
    if (const auto env = job_fields::get<nlohmann::json>(job.document, "env"); env.is_string()) {
      const auto name = env.get<std::string>();
      const auto offered = known.environments.find(name);
      if (known.environments.empty()) {
        environments_unchecked = true;
      } else if (offered == known.environments.end()) {
        std::vector<std::string> names;
        for (const auto& [other, runners] : known.environments) names.push_back(other);
        throw InvalidInput(
            "env", "no agent offers environment '" + name + "' (offered: " + listed(names) + ", " + source + ")");
      } else if (!offered->second.contains(runner)) {
        throw InvalidInput("env", "runner '" + runner + "' does not run in environment '" + name +
                                      "' (there: " + listed(offered->second) + ", " + source + ")");
      }
    }
    const auto found = known.runners.find(runner);
    if (found == known.runners.end()) {
      unknown_runners.insert(runner);
      continue;
    }
    for (const auto& [field, values] : found->second) {
      const auto value = job_fields::get<std::string>(job.document, field);
      if (values.empty() || values.contains(value)) continue;
      // LIBRARY:NAME where the runner lists LIBRARY:* (the name is the library's word, at run time).
      if (const auto colon = value.find(':');
          field == "model" && colon != std::string::npos && values.contains(value.substr(0, colon) + ":*")) {
        continue;
      }
      std::string runs;
      for (const auto& name : values) runs += (runs.empty() ? "" : ", ") + name;
      std::string guess;
      for (const auto& name : closest_names(value, {values.begin(), values.end()})) {
        guess += (guess.empty() ? "; closest: " : ", ") + name;
      }
      throw InvalidInput(field, "no runner '" + runner + "' can run " + field + " '" + value + "'" + guess +
                                    " (it runs " + runs + ", " + source + ")");
    }
  }
  std::vector<std::string> warnings;
  for (const auto& runner : unknown_runners) {
    warnings.push_back("no runner '" + runner + "' known (" + source + "), so its models are unchecked");
  }
  if (environments_unchecked) {
    warnings.push_back("no environments known (" + source + "), so the jobs' env is unchecked");
  }
  return warnings;
}

}  // namespace ts::sweep
