#include "shared/sweep/runnable.hpp"

#include "shared/closest_names.hpp"
#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/model_lists.hpp"

namespace ts::sweep {
namespace {

// The capability key of each checked job field ("models" for "model", ...).
const std::map<std::string, std::string>& checked_fields() {
  static const std::map<std::string, std::string> fields{
      {"model", "models"}, {"mode", "modes"}, {"precision", "precisions"}, {"task", "tasks"}};
  return fields;
}

}  // namespace

KnownRunners known_runners(const std::vector<nlohmann::json>& capabilities, const ModelLists& lists) {
  KnownRunners known;
  // A digest's names are merged once per place: a fleet of one image repeats it on every agent.
  std::set<std::pair<const void*, std::string>> merged;
  const auto merge = [&](std::set<std::string>& into, const nlohmann::json& names) {
    if (model_lists::is_digest(names)) {
      const auto& digest = names.get_ref<const std::string&>();
      const auto found = lists.find(digest);
      if (found == lists.end() || !merged.insert({&into, digest}).second) return;
      into.insert(found->second.begin(), found->second.end());
      return;
    }
    for (const auto& name : names) into.insert(name.get<std::string>());
  };
  for (const auto& agent : capabilities) {
    for (const auto& runner : agent.value("runners", std::vector<std::string>{})) known.runners[runner];
    for (const auto& [field, key] : checked_fields()) {
      const auto listed = agent.value(key, nlohmann::json::object());
      for (const auto& [runner, values] : listed.items()) {
        // A list not at hand checks nothing, rather than refusing every name.
        if (model_lists::is_digest(values) && !lists.contains(values.get<std::string>())) continue;
        merge(known.runners[runner][field], values);
      }
    }
    const auto environments = agent.value("environments", nlohmann::json::object());
    for (const auto& [name, environment] : environments.items()) {
      auto& runners = known.environments[name];
      for (const auto& [runner, versions] : environment.at("runners").items()) runners[runner];
      const auto models = environment.value("models", nlohmann::json::object());
      for (const auto& [runner, names] : models.items()) merge(runners[runner], names);
    }
  }
  return known;
}

std::vector<std::string> check_runnable(const Sweep& sweep, const KnownRunners& known, const std::string& source,
                                        bool complete) {
  std::set<std::string> unknown_runners;
  bool environments_unchecked = false;
  const auto listed = [](const auto& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("none") : text;
  };
  for (const auto& job : sweep.jobs) {
    const auto runner = job_fields::get<std::string>(job.document, "runner");
    const std::set<std::string>* env_models = nullptr;  // what the runner listed in the job's environment
    std::string env_name;
    bool in_environment = false;  // the job's env offers its runner
    if (const auto env = job_fields::get<nlohmann::json>(job.document, "env"); env.is_string()) {
      const auto name = env.get<std::string>();
      const auto offered = known.environments.find(name);
      if (known.environments.empty() && !complete) {
        environments_unchecked = true;
      } else if (offered == known.environments.end()) {
        std::vector<std::string> names;
        for (const auto& [other, runners] : known.environments) names.push_back(other);
        throw InvalidInput(
            "env", "no agent offers environment '" + name + "' (offered: " + listed(names) + ", " + source + ")");
      } else if (const auto there = offered->second.find(runner); there == offered->second.end()) {
        std::vector<std::string> runners;
        for (const auto& [other, models] : offered->second) runners.push_back(other);
        throw InvalidInput("env", "runner '" + runner + "' does not run in environment '" + name +
                                      "' (there: " + listed(runners) + ", " + source + ")");
      } else {
        in_environment = true;
        if (!there->second.empty()) {
          env_models = &there->second;
          env_name = name;
        }
      }
    }
    const auto found = known.runners.find(runner);
    if (found == known.runners.end()) {
      if (complete && !in_environment) {
        std::vector<std::string> names;
        for (const auto& [other, support] : known.runners) names.push_back(other);
        throw InvalidInput("runner", "no runner '" + runner + "' (runners: " + listed(names) + ", " + source + ")");
      }
      unknown_runners.insert(runner);
      continue;
    }
    for (const auto& [field, own] : found->second) {
      const auto& values = field == "model" && env_models ? *env_models : own;
      const auto value = job_fields::get<std::string>(job.document, field);
      if (values.empty() || values.contains(value)) continue;
      // LIBRARY:NAME where the runner lists LIBRARY:* (the user's files and modules, looked up by the agent).
      if (const auto colon = value.find(':');
          field == "model" && colon != std::string::npos && values.contains(value.substr(0, colon) + ":*")) {
        continue;
      }
      const auto where = env_name.empty() ? std::string() : " in environment '" + env_name + "'";
      if (field == "model") {
        std::vector<std::string> elsewhere;  // a library's version there has it
        for (const auto& [other, runners] : known.environments) {
          const auto listing = runners.find(runner);
          if (other != env_name && listing != runners.end() && listing->second.contains(value))
            elsewhere.push_back(other);
        }
        if (!elsewhere.empty()) {
          throw InvalidInput(field, "runner '" + runner + "' has no model '" + value + "'" +
                                        (where.empty() ? " in its own environment" : where) +
                                        " (the library is not installed there, or its version lacks the name); "
                                        "environments that have it: " +
                                        listed(elsewhere) + " (name one with env, " + source + ")");
        }
      }
      // Libraries list thousands of names: the count, with the closest.
      const auto runs = values.size() <= 16
                            ? listed(values)
                            : std::to_string(values.size()) + " " + field + "s, which its --list-models lists";
      std::string guess;
      for (const auto& name : closest_names(value, {values.begin(), values.end()})) {
        guess += (guess.empty() ? "; closest: " : ", ") + name;
      }
      throw InvalidInput(field, "no runner '" + runner + "' can run " + field + " '" + value + "'" + where + guess +
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
