// torchsweep bisect FIELD=VALUE... --good env=A --bad env=B (or --repo PATH
// --good SHA --bad SHA): the command's options; the bisection itself is
// cli/bisection.* (docs/bisect.md). Exit: 0 the first bad step found; 7 a
// step could not be judged (inconclusive); 2 bad input, or the bad side is
// not slower; 3 a step's sweep could not run; 4 the coordinator is
// unreachable.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/bisect_steps.hpp"
#include "cli/bisection.hpp"
#include "cli/commands.hpp"
#include "cli/filter_options.hpp"
#include "cli/key_value.hpp"
#include "readers/regression_records.hpp"
#include "shared/errors.hpp"
#include "store/migrations.hpp"
#include "store/store.hpp"

namespace ts::cli {
namespace {

bool is_regression_id(const std::string& word) {
  return word.size() == 14 && word.starts_with("r-") &&
         word.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
}

// A stored regression (`nightly` recorded it, docs/bisect.md) as the configuration: the night's newest run's job
// without the bisected field. Over environments, a side not given is the regression's: bad the night's environment,
// good the one an agent offers with the baseline night's PyTorch version.
void from_stored_regression(BisectSettings& settings, const std::string& id) {
  if (!std::filesystem::exists(settings.db)) throw InvalidInput("--db", settings.db + ": no such store");
  auto database = store::open_read_only(settings.db);
  const auto found = readers::stored_regression(database, id);
  if (!found) {
    throw InvalidInput("configuration",
                       "no stored regression '" + id + "' in " + settings.db + " (torchsweep query --regressions)");
  }
  if (found->at("job").is_null()) {
    throw InvalidInput("configuration", id + ": its group was not one configuration; give the job fields instead");
  }
  settings.configuration = found->at("job");
  const std::string field = settings.repo.empty() ? "env" : "model_commit";
  const auto side = settings.configuration.value(field, nlohmann::json(nullptr));
  settings.configuration.erase(field);
  if (field != "env" || (!settings.good.empty() && !settings.bad.empty())) return;
  if (!side.is_string()) {
    throw InvalidInput("configuration", id + ": it ran in its runner's own environment; give --good and --bad");
  }
  if (settings.bad.empty()) settings.bad = "env=" + side.get<std::string>();
  if (!settings.good.empty()) return;
  const auto& before = found->at("torch_versions").at(0);
  if (before.size() != 1) {
    throw InvalidInput("--good", id + ": the baseline night ran " + std::to_string(before.size()) +
                                     " PyTorch versions, not one: name the good environment");
  }
  const auto runner = settings.configuration.value("runner", std::string("libtorch"));
  const auto good = environment_offering(environment_versions(store::agent_capabilities(database), runner),
                                         before.at(0).get<std::string>());
  if (!good) {
    throw InvalidInput("--good", id + ": no agent offers PyTorch " + before.at(0).get<std::string>() +
                                     " (the baseline night's) with runner " + runner +
                                     ": make one (torchsweep-make-environment) or name the good environment");
  }
  settings.good = "env=" + *good;
}

}  // namespace

Command add_bisect_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "bisect",
      "which PyTorch environment, or which commit of your model's code, made a configuration slower: each step "
      "measured beside the good side with the runs its noise needs, judged by the calibrated rule");
  auto settings = std::make_shared<BisectSettings>();
  auto fields = std::make_shared<std::vector<std::string>>();
  command
      ->add_option("configuration", *fields,
                   "FIELD=VALUE: the job fields of the one configuration (runner=torch-compile model=resnet18 "
                   "batch_size=16), a value read as JSON where it parses; or a stored regression's id (r-..., "
                   "torchsweep query --regressions)")
      ->required();
  command->add_option("--good", settings->good,
                      "env=NAME (with --repo: a commit), the side that is fast (given a regression's id: the "
                      "environment offering its baseline night's PyTorch version)");
  command->add_option("--bad", settings->bad,
                      "env=NAME (with --repo: a commit), the side that is slow (given a regression's id: its "
                      "night's environment)");
  command->add_option("--repo", settings->repo,
                      "the git repository of a python: model's code: bisect its commits (the agents' --model-path "
                      "must hold it)");
  command->add_option("--db", settings->db, "the store (the coordinator's, read here)")->capture_default_str();
  command->add_option("--power", settings->power, "each step's runs: enough for the rule to see --slowdown this often")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999));
  command
      ->add_option("--slowdown", settings->slowdown,
                   "the slowdown a step must be seen to have (0.1: 10%; steps use the smaller of this and the "
                   "measured bad side's)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 10.0));
  command->add_option("--min-runs", settings->min_runs, "runs a side before a step is first judged")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{5}, int64_t{1000}));
  command->add_option("--max-runs", settings->max_runs, "runs a side at most; a step still undecided is inconclusive")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{5}, int64_t{1000}));
  command->add_option("--timeout-s", settings->timeout_s, "how long one step may take")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--format", settings->format, "table | csv | json")->capture_default_str();
  command->add_flag("--explain", settings->explain,
                    "the first bad found: profile it and the last good in one paired sweep (--min-runs a side) "
                    "and explain why it is slower (docs/explain.md)");
  command
      ->add_option("--profile-steps", settings->profile_steps,
                   "with --explain: steps of each profiling run (default: the job field's, docs/explain.md)")
      ->check(CLI::Range(1, 100));
  add_regression_options(command, settings->rule);
  add_local_agent_options(command, settings->local);
  add_environment_making_options(command, settings->making);
  add_client_options(command, settings->client);
  auto* coordinator = command->get_option("--coordinator");
  coordinator->description(
      "HOST:PORT: run the steps on this coordinator's agents (its store must be --db) instead "
      "of a local agent");
  return [settings, fields, coordinator] {
    settings->remote = coordinator->count() > 0;
    if (fields->size() == 1 && is_regression_id(fields->front())) {
      from_stored_regression(*settings, fields->front());
    } else {
      for (const auto& text : *fields) add_job_field(settings->configuration, text, "configuration");
    }
    for (auto [option, side] : {std::pair{"--good", &settings->good}, {"--bad", &settings->bad}}) {
      if (side->empty()) throw InvalidInput(option, "required (it is taken from a stored regression's id only)");
    }
    return run_bisection(*settings);
  };
}

}  // namespace ts::cli
