// torchsweep bisect FIELD=VALUE... --good env=A --bad env=B (or --repo PATH
// --good SHA --bad SHA): the command's options; the bisection itself is
// cli/bisection.* (docs/bisect.md). Exit: 0 the first bad step found; 7 a
// step could not be judged (inconclusive); 2 bad input, or the bad side is
// not slower; 3 a step's sweep could not run; 4 the coordinator is
// unreachable.
#include <memory>
#include <string>
#include <vector>

#include "cli/bisection.hpp"
#include "cli/commands.hpp"
#include "cli/filter_options.hpp"
#include "cli/key_value.hpp"

namespace ts::cli {

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
                   "batch_size=16); a value is read as JSON where it parses")
      ->required();
  command->add_option("--good", settings->good, "env=NAME (with --repo: a commit), the side that is fast")->required();
  command->add_option("--bad", settings->bad, "env=NAME (with --repo: a commit), the side that is slow")->required();
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
    for (const auto& text : *fields) add_job_field(settings->configuration, text, "configuration");
    return run_bisection(*settings);
  };
}

}  // namespace ts::cli
