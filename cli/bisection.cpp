// Every step of a bisection is a sweep of its own, through the coordinator
// or a local agent, so a restart resumes it: the steps already in the store
// are read back, not run again (docs/bisect.md).
#include "cli/bisection.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <set>

#include "cli/bisect_environments.hpp"
#include "cli/bisect_steps.hpp"
#include "cli/bisect_why.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/key_value.hpp"
#include "cli/local_sweep.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "readers/bisection.hpp"
#include "readers/explanation_text.hpp"
#include "readers/noise.hpp"
#include "readers/vocabulary.hpp"
#include "shared/digest.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/shell_command.hpp"
#include "shared/statistics.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/wire/protocol.hpp"
#include "store/migrations.hpp"
#include "store/store.hpp"

namespace ts::cli {
namespace {

// What every step shares: the configuration, the bisected field and its two sides, the rule.
struct Plan {
  nlohmann::json configuration;  // job fields
  std::string field;             // env or model_commit
  std::string good, bad;
  std::string tag;  // of every sweep of this bisection: bisect-ID
  readers::RegressionRule rule;
  std::optional<double> run_sd;  // the calibrated noise of the configuration, if a calibration measured it
};

// The fewest runs a side (from min) at which the calibrated noise gives the rule `power` to see `slowdown`.
int64_t runs_for_power(const Plan& plan, const BisectSettings& settings, double slowdown) {
  if (!plan.run_sd) return settings.min_runs;
  for (auto runs = settings.min_runs; runs < settings.max_runs; ++runs) {
    auto rule = plan.rule;
    rule.threshold = threshold_in_force(plan.rule, plan.run_sd, runs, runs);
    if (detection_power(*plan.run_sd, runs, runs, slowdown, rule) >= settings.power) return runs;
  }
  return settings.max_runs;
}

// The sweep that measures `step` beside the good side: a pair on one agent, in alternation, with adaptive
// repeats until the rule has the power asked for (docs/sweeps.md).
nlohmann::json step_sweep(const Plan& plan, const BisectSettings& settings, const std::string& step, double slowdown) {
  const auto min_runs = runs_for_power(plan, settings, slowdown);
  return {{"name", plan.tag},
          {"description", "torchsweep bisect: " + plan.field + "=" + step + " against " + plan.good},
          {"tags", {"bisect", plan.tag}},
          {"axes", {{plan.field, {plan.good, step}}}},
          {"fixed", plan.configuration},
          {"pairing", {{"by", plan.field}}},
          {"repeats",
           {{"min", min_runs},
            {"max", std::max(min_runs, settings.max_runs)},
            {"until",
             {{"compare", plan.field},
              {"power", settings.power},
              {"slowdown", slowdown},
              {"alpha", plan.rule.alpha},
              {"threshold", plan.rule.threshold},
              {"decided", true}}}}}};
}

// A local step's sweep interrupted (Ctrl-C): it was cancelled, and the bisection ends (exit 3).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the step's sweep to its end, through the coordinator or a local agent; its id.
std::string run_step(const BisectSettings& settings, const nlohmann::json& spec) {
  if (settings.remote) {
    const auto submitted =
        request(settings.client,
                wire::make_message("submit", {{"sweep", spec}, {"origin", "bisect"}, {"submitter", submitter_name()}}));
    const auto sweep_id = submitted.at("sweep_id").get<std::string>();
    wait_for_sweep(settings.client, sweep_id, std::chrono::seconds(settings.timeout_s));
    return sweep_id;
  }
  auto local = settings.local;
  local.db = settings.db;
  local.sweep = "bisect";
  local.budget_s = static_cast<double>(settings.timeout_s);  // as long as a cluster's step is waited for
  std::string sweep_id;
  const auto level = log::level();
  const int code = run_local_sweep(local, spec, [&](store::Store&, const std::string& id) { sweep_id = id; });
  log::set_level(level);  // the local sweep quiets the log to its own progress line
  if (sweep_id.empty()) throw Interrupted("the step's sweep was interrupted (exit " + std::to_string(code) + ")");
  return sweep_id;
}

// Every agent's capabilities as the store keeps them (the environments they offer).
std::vector<nlohmann::json> registered_capabilities(const std::string& db) {
  if (!std::filesystem::exists(db)) return {};  // a local agent's first bisection: it makes the store
  auto database = store::open_read_only(db);
  return store::agent_capabilities(database);
}

// The calibrated run spread of the configuration (docs/noise.md), on its fixed configuration axes but the bisected.
std::optional<double> calibrated_noise(const std::string& db, const Plan& plan) {
  if (plan.rule.calibration_tag.empty() || !std::filesystem::exists(db)) return std::nullopt;
  std::vector<std::string> axes;
  std::vector<nlohmann::json> key;
  for (const auto& axis : readers::configuration_axes()) {
    if (axis == plan.field || !plan.configuration.contains(axis)) continue;
    axes.push_back(axis);
    key.push_back(plan.configuration.at(axis));
  }
  auto database = store::open_read_only(db);
  return readers::calibrated_spread(readers::calibrated_configurations(database, plan.rule.calibration_tag), axes, key);
}

std::string short_name(const Plan& plan, const std::string& step) {
  return plan.field == "model_commit" ? step.substr(0, 12) : step;
}

// The step's evidence from the runs of sweep `sweep_id`.
readers::StepEvidence judged(const BisectSettings& settings, const Plan& plan, const std::string& step,
                             const std::string& sweep_id) {
  auto database = store::open_read_only(settings.db);
  auto runs = readers::runs_by_side(database, sweep_id, plan.field);
  auto& now = runs[step];
  auto& then = runs[plan.good];
  auto evidence = readers::judge_step(step, now, then, plan.rule,
                                      threshold_in_force(plan.rule, plan.run_sd, now.size(), then.size()));
  evidence.sweep_id = sweep_id;
  return evidence;
}

// The step's evidence: from the sweep an earlier start of the same bisection ran (waited for if it still runs), or
// from a sweep run now. An earlier sweep that stopped undecided short of --max-runs (a larger one now) is run again.
readers::StepEvidence measured(const BisectSettings& settings, const Plan& plan, const std::string& step,
                               double slowdown, const std::function<void()>& before_running) {
  const auto existing = [&] {
    if (!std::filesystem::exists(settings.db)) return std::map<std::string, std::string>{};
    auto database = store::open_read_only(settings.db);
    return readers::step_sweeps(database, plan.tag, plan.field, plan.good);
  }();
  std::optional<readers::StepEvidence> evidence;
  if (const auto found = existing.find(step); found != existing.end()) {
    log::info("{}={}: measured by sweep {} already; reading it back", plan.field, short_name(plan, step),
              found->second);
    if (settings.remote) wait_for_sweep(settings.client, found->second, std::chrono::seconds(settings.timeout_s));
    evidence = judged(settings, plan, step, found->second);
    const auto runs = static_cast<int64_t>(std::min(evidence->runs.size(), evidence->reference_runs.size()));
    if (evidence->verdict == readers::StepVerdict::inconclusive && runs < settings.max_runs) {
      log::info("{}={}: undecided after {} runs a side there; measuring it again with up to {}", plan.field,
                short_name(plan, step), runs, settings.max_runs);
      evidence.reset();
    }
  }
  if (!evidence) {
    log::info("{}={}: measuring it beside {}={}", plan.field, short_name(plan, step), plan.field,
              short_name(plan, plan.good));
    before_running();
    evidence = judged(settings, plan, step, run_step(settings, step_sweep(plan, settings, step, slowdown)));
  }
  if (evidence->runs.empty() || evidence->reference_runs.empty()) {
    log::warn("{}={}: sweep {} has no successful run of {}: see torchsweep status --sweep {}", plan.field,
              short_name(plan, step), evidence->sweep_id,
              evidence->runs.empty() ? short_name(plan, step) : short_name(plan, plan.good), evidence->sweep_id);
  }
  log::info("{}={}: {} ({} runs against {})", plan.field, short_name(plan, step), readers::to_string(evidence->verdict),
            evidence->runs.size(), evidence->reference_runs.size());
  return *evidence;
}

// --explain: the first bad against the last good, profiled in one paired sweep (an earlier start's, read back, or
// one run now) and explained; or why it could not be.
nlohmann::json explained(const BisectSettings& settings, const Plan& plan, const std::string& last_good,
                         const std::string& first_bad, const std::function<void()>& before_running) {
  WhySweep why{
      plan.field, last_good, first_bad, plan.configuration, plan.tag, settings.min_runs, settings.profile_steps};
  auto sweep_id = why_sweep_in(settings.db, why);
  if (sweep_id) {
    log::info("why: profiled in pairs by sweep {} already; reading it back", *sweep_id);
    if (settings.remote) wait_for_sweep(settings.client, *sweep_id, std::chrono::seconds(settings.timeout_s));
  } else {
    log::info("why: profiling {}={} and {}={} in pairs, {} runs a side", plan.field, short_name(plan, last_good),
              plan.field, short_name(plan, first_bad), why.runs);
    try {
      before_running();
      sweep_id = run_step(settings, why.document());
    } catch (const Interrupted& error) {
      return {{"error", error.what()}};
    }
  }
  try {
    return explain_pair(settings.db, why, *sweep_id);
  } catch (const InvalidInput& error) {
    return {{"error",
             std::string(error.what()) + " (sweep " + *sweep_id + ": torchsweep status --sweep " + *sweep_id + ")"}};
  }
}

}  // namespace

int run_bisection(BisectSettings& settings) {
  const auto format = parse_format(settings.format, "--format");
  if (settings.max_runs < settings.min_runs) throw InvalidInput("--max-runs", "below --min-runs");
  if (!settings.remote) migrate_for_local_agent(settings.db);
  Plan plan;
  plan.rule = settings.rule;
  plan.configuration = settings.configuration;
  const auto runner = plan.configuration.value("runner", std::string("libtorch"));
  if (settings.making.enabled && (!settings.repo.empty() || settings.remote)) {
    throw InvalidInput("--make-environments",
                       settings.remote ? "only with a local agent: a cluster's agents offer the environments they "
                                         "have (make them on each node with torchsweep-make-environment)"
                                       : "only over environments (env=), not commits");
  }
  std::vector<std::string> steps;
  if (!settings.repo.empty()) {
    plan.field = "model_commit";
    steps = commits_between(settings.repo, settings.good, settings.bad);
    plan.good = steps.front();
    plan.bad = steps.back();
  } else {
    plan.field = "env";
    for (auto [option, text, side] :
         {std::tuple{"--good", settings.good, &plan.good}, {"--bad", settings.bad, &plan.bad}}) {
      auto [key, value] = split_key_value(text, option);
      if (key != "env") {
        throw InvalidInput(option, "expected env=NAME (or, with --repo, a commit), got '" + text + "'");
      }
      *side = value;
    }
    // The versions between, from the agents that registered; a local agent's first bisection lists them once
    // it has (after the bad side's step).
    const auto capabilities = registered_capabilities(settings.db);
    steps = capabilities.empty() ? std::vector<std::string>{plan.good, plan.bad}
                                 : environments_between(capabilities, runner, plan.good, plan.bad);
  }
  if (plan.configuration.contains(plan.field)) {
    throw InvalidInput("configuration", plan.field + ": it is the bisected field (--good, --bad), not a fixed one");
  }
  plan.tag = "bisect-" + sha256_hex(nlohmann::json{{"configuration", plan.configuration},
                                                   {"field", plan.field},
                                                   {"good", plan.good},
                                                   {"bad", plan.bad}}
                                        .dump())
                             .substr(0, 12);
  // A bad configuration fails here, before anything runs: the first step's sweep, expanded.
  sweep::expand(step_sweep(plan, settings, plan.bad, settings.slowdown), "bisect");
  plan.run_sd = calibrated_noise(settings.db, plan);
  log::info("bisection {}: {} from {} to {}{}", plan.tag, plan.field, short_name(plan, plan.good),
            short_name(plan, plan.bad),
            plan.run_sd ? " (calibrated run spread " + std::to_string(*plan.run_sd) + ")" : "");

  std::map<std::string, readers::StepVerdict> verdicts;
  std::vector<readers::StepEvidence> evidence;
  double slowdown = settings.slowdown;
  std::set<std::string> to_make;  // released versions no environment offers (--make-environments)
  // Made (or found made before) for the local agent to offer, when a sweep runs the step: not for a step read
  // back from the store, whose environment the disk budget may have removed since.
  const auto make_if_needed = [&](const std::string& step) {
    if (to_make.contains(step) && !settings.local.environments.contains(step)) {
      settings.local.environments[step] = make_environment(settings.making, step, made_version(step));
    }
  };
  auto state = readers::next_step(steps, verdicts);
  while (state.kind == readers::BisectionState::Kind::measure) {
    try {
      evidence.push_back(measured(settings, plan, state.step, slowdown, [&] { make_if_needed(state.step); }));
    } catch (const Interrupted& error) {
      std::cerr << error.what() << "; run the same command again to resume from the steps measured\n";
      return exit_code::run_failed;
    }
    verdicts[state.step] = evidence.back().verdict;
    if (state.step == plan.bad && evidence.back().verdict == readers::StepVerdict::bad) {
      // The steps need only the power to see what the whole regression is.
      const auto& ends = evidence.back();
      slowdown = std::min(slowdown, stats::median(ends.runs) / stats::median(ends.reference_runs) - 1);
      if (plan.field == "env") {
        const auto capabilities = registered_capabilities(settings.db);
        steps = environments_between(capabilities, runner, plan.good, plan.bad);
        if (settings.making.enabled) {
          const auto versions = environment_versions(capabilities, runner);
          steps = steps_with_released(steps, versions, settings.making);
          // Made when first measured: those none offers, and those an earlier run made, which only the local
          // agent of the run that made them offered (found made, at once).
          for (const auto& step : steps) {
            if (!versions.contains(step) || made_before(settings.making, step)) to_make.insert(step);
          }
        }
      }
      log::info("{} steps between {} and {}", steps.size() - 2, short_name(plan, plan.good),
                short_name(plan, plan.bad));
    }
    state = readers::next_step(steps, verdicts);
  }

  const auto table = readers::evidence_table(steps, evidence, plan.field);
  using Kind = readers::BisectionState::Kind;
  const auto& last = *std::find_if(evidence.begin(), evidence.end(), [&](auto& e) { return e.step == state.step; });
  std::string conclusion;
  nlohmann::json explanation;  // --explain's, or its error
  int code = exit_code::ok;
  if (state.kind == Kind::first_bad) {
    // Why: the two neighbours' profiles, each side from a sweep that ran it (the good side is in every one).
    const auto sweep_of = [&](const std::string& step) {
      const auto found = std::find_if(evidence.begin(), evidence.end(), [&](auto& e) { return e.step == step; });
      return found == evidence.end() ? last.sweep_id : found->sweep_id;
    };
    // A local agent's environments (made ones, or named with --env) are offered to explain's local agent as well.
    std::string environments;
    for (const auto& side : {state.last_good, state.step}) {
      const auto python = settings.local.environments.find(side);
      if (plan.field == "env" && !settings.remote && python != settings.local.environments.end()) {
        environments += " --env " + shell_quoted(side + "=" + python->second.string());
      }
    }
    conclusion = "first bad: " + plan.field + "=" + state.step + " (last good: " + state.last_good + ")";
    if (settings.explain) {
      explanation = explained(settings, plan, state.last_good, state.step, [&] {
        make_if_needed(state.last_good);
        make_if_needed(state.step);
      });
    } else {
      conclusion +=
          "\nwhy (docs/explain.md): the same command with --explain profiles the two in pairs, or, from "
          "the steps' own sweeps (measured apart): torchsweep explain sweep=" +
          sweep_of(state.last_good) + "," + plan.field + "=" + state.last_good + " sweep=" + last.sweep_id + "," +
          plan.field + "=" + state.step + " --db " + settings.db + environments;
    }
  } else if (state.kind == Kind::inconclusive) {
    conclusion =
        "inconclusive at " + plan.field + "=" + state.step + ": " +
        (last.ratio ? "its interval [" + std::to_string(last.ratio->low) + ", " + std::to_string(last.ratio->high) +
                          "] straddles 1 + the threshold " + std::to_string(last.threshold)
                    : std::string("too few successful runs to judge")) +
        " after " + std::to_string(last.runs.size()) + " runs; the first bad lies after " + state.last_good +
        (state.known_bad.empty() ? "" : " and at or before " + state.known_bad) +
        " (no guess is made: rerun with a larger --max-runs, or calibrate the configuration)";
    code = exit_code::inconclusive;
  } else {
    conclusion = "the bad side is not slower: " + plan.field + "=" + plan.bad + " against " + plan.good +
                 " (verdict good at threshold " + std::to_string(last.threshold) + "): nothing to bisect";
    code = exit_code::invalid_input;
  }
  if (format == Format::json) {
    nlohmann::json answer{{"bisection", plan.tag},
                          {"field", plan.field},
                          {"steps", steps},
                          {"evidence", readers::row_objects(table)},
                          {"result", state.kind == Kind::first_bad      ? "first_bad"
                                     : state.kind == Kind::inconclusive ? "inconclusive"
                                                                        : "not_regressed"},
                          {"step", state.step},
                          {"last_good", state.last_good},
                          {"conclusion", conclusion}};
    if (!explanation.is_null())
      answer[explanation.contains("error") ? "explanation_error" : "explanation"] =
          explanation.contains("error") ? explanation.at("error") : explanation;
    std::cout << answer.dump(2) << "\n";
  } else {
    std::cout << render(table, format, terminal_width());
    std::cout << conclusion << "\n";
    if (explanation.contains("error")) {
      std::cout << "\nnot explained: " << explanation.at("error").get<std::string>() << "\n";
    } else if (!explanation.is_null()) {
      std::cout << "\nWhy (" << plan.field << "=" << short_name(plan, state.step) << " against "
                << short_name(plan, state.last_good) << ", profiled in pairs; docs/explain.md):\n"
                << readers::explanation_text(explanation);
    }
  }
  return code;
}

}  // namespace ts::cli
