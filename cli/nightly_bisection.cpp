#include "cli/nightly_bisection.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "cli/bisect_environments.hpp"
#include "cli/bisect_steps.hpp"
#include "cli/bisection.hpp"
#include "readers/explanation.hpp"
#include "readers/labels.hpp"
#include "readers/why_section.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "store/migrations.hpp"
#include "store/store.hpp"

namespace ts::cli {
namespace {

using nlohmann::json;

// What one regression's bisection needs, read from the store before any step runs.
struct Case {
  std::string before, after;            // the PyTorch versions of the baseline night and of this one
  std::string runner, env;              // this night's
  json job;                             // this night's newest run's job, as submitted
  std::optional<std::string> good_env;  // an environment offering `before`
};

// FIELD=VALUE words of a job, as `torchsweep bisect` reads them.
std::string fields_of(const json& job) {
  std::string words;
  for (const auto& [field, value] : job.items()) {
    const auto text = value.is_string() ? value.get<std::string>() : value.dump();
    words += (words.empty() ? "" : " ") + ("'" + field + "=" + text + "'");
  }
  return words;
}

// The case of a regression row, or why it is not bisected.
std::variant<Case, std::string> case_of(store::Database& database, const json& row,
                                        const readers::ResultFilter& current, const std::string& baseline_id,
                                        const std::vector<json>& capabilities) {
  Case bisected;
  std::array<readers::ExplainSide, 2> sides;
  try {
    sides = readers::explain_sides(database, readers::regression_explanation(row, current, baseline_id));
  } catch (const InvalidInput& error) {
    return std::string(error.what());
  }
  const auto& [then, now] = sides;
  if (then.torch_versions.size() != 1 || now.torch_versions.size() != 1) {
    return std::string("its runs do not report one PyTorch version a night (") +
           std::to_string(then.torch_versions.size()) + " and " + std::to_string(now.torch_versions.size()) + ")";
  }
  bisected.before = *then.torch_versions.begin();
  bisected.after = *now.torch_versions.begin();
  for (const auto* version : {&bisected.before, &bisected.after}) {
    // Another framework's runs hold "NAME VERSION" there (agent/judge/summary.cpp).
    if (version->empty() || !std::isdigit(static_cast<unsigned char>(version->front()))) {
      return "its runs report '" + *version + "', not a PyTorch version: a bisection steps over PyTorch's";
    }
  }
  if (version_numbers(bisected.before) == version_numbers(bisected.after)) {
    return "both nights ran PyTorch " + bisected.after + ": not an upgrade, nothing to bisect";
  }
  bisected.runner = now.configuration.value("runner", std::string("libtorch"));
  if (!now.configuration.contains("env") || !now.configuration.at("env").is_string()) {
    return std::string("it ran in its runner's own environment: a bisection steps over named environments");
  }
  bisected.env = now.configuration.at("env").get<std::string>();
  bisected.job = now.job;
  bisected.job.erase("env");
  bisected.good_env = environment_offering(environment_versions(capabilities, bisected.runner), bisected.before);
  return bisected;
}

}  // namespace

void bisect_regressions(const NightlyBisection& settings, const readers::Table& table,
                        const readers::ResultFilter& current) {
  std::vector<std::variant<Case, std::string>> cases;
  std::vector<std::string> labels;
  {
    auto database = store::open_read_only(settings.db);
    const auto baseline_id = readers::resolve_baseline(database, settings.tag, current);
    const auto capabilities = store::agent_capabilities(database);
    for (const auto& row : readers::row_objects(table)) {
      if (!readers::explained_regression(row)) continue;
      labels.push_back(readers::label_of(row, readers::configuration_axes()));
      cases.push_back(case_of(database, row, current, baseline_id, capabilities));
    }
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::printf("\nWhich upgrade made %s slower (torchsweep bisect, docs/bisect.md):\n", labels[i].c_str());
    if (const auto* why = std::get_if<std::string>(&cases[i])) {
      std::printf("  not bisected: %s\n", why->c_str());
      continue;
    }
    const auto& bisected = std::get<Case>(cases[i]);
    if (!bisected.good_env) {
      const auto release = bisected.before.substr(0, bisected.before.find('+'));  // the index has no local part
      const auto made = made_name(release);
      std::printf(
          "  not bisected: PyTorch %s (the baseline night's; this night ran %s in %s) is offered by no agent "
          "with runner %s. Make it on a node and offer it there:\n"
          "    torchsweep-make-environment make %s --pin torch==%s --root DIR --wheels DIR\n"
          "    torchsweep agent ... --env %s=DIR/%s/bin/python3\n"
          "  then: torchsweep bisect %s --good env=%s --bad env=%s --coordinator ... --db %s\n",
          bisected.before.c_str(), bisected.after.c_str(), bisected.env.c_str(), bisected.runner.c_str(), made.c_str(),
          release.c_str(), made.c_str(), made.c_str(), fields_of(bisected.job).c_str(), made.c_str(),
          bisected.env.c_str(), settings.db.c_str());
      continue;
    }
    std::printf("  PyTorch %s (env=%s) to %s (env=%s)\n", bisected.before.c_str(), bisected.good_env->c_str(),
                bisected.after.c_str(), bisected.env.c_str());
    std::fflush(stdout);
    BisectSettings bisection;
    bisection.configuration = bisected.job;
    bisection.good = "env=" + *bisected.good_env;
    bisection.bad = "env=" + bisected.env;
    bisection.db = settings.db;
    bisection.rule = settings.rule;
    bisection.timeout_s = settings.timeout.count();
    bisection.client = settings.client;
    bisection.remote = true;
    bisection.explain = settings.explain;
    try {
      const int code = run_bisection(bisection);
      log::info("bisection of {} ended with exit {}", labels[i], code);
    } catch (const InvalidInput& error) {
      std::printf("  not bisected: %s\n", error.what());
    }
  }
}

}  // namespace ts::cli
