#pragma once
// Typos caught before a night is spent: whether each job of a sweep names a
// model, mode and precision some runner of its name runs, as the runners
// said (their --list-models and --version, reported in the agents'
// capabilities, or asked locally by `submit --dry-run`).
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "shared/sweep/sweep.hpp"

namespace ts::sweep {

// What runners of one name said they run, by job field: "model", "mode",
// "precision". A field a runner said nothing of is not checked.
using RunnerSupport = std::map<std::string, std::set<std::string>>;
// What agents said they run: runner name -> its support in its own
// environment (a runner listed with nothing said is unchecked), and
// environment name -> the runners that run there -> the models each listed
// there (docs/environments.md; empty: none listed).
struct KnownRunners {
  std::map<std::string, RunnerSupport> runners;
  std::map<std::string, std::map<std::string, std::set<std::string>>> environments;
};

// Model lists by digest (shared/model_lists.hpp): digest -> names.
using ModelLists = std::map<std::string, std::vector<std::string>>;

// The runners and what they run in agents' capabilities ("runners",
// "models", "modes", "precisions", "environments"), merged over the agents.
// A model list given by its digest is read from `lists` (one missing there
// is as if not listed).
KnownRunners known_runners(const std::vector<nlohmann::json>& capabilities, const ModelLists& lists = {});

// Throws ts::InvalidInput(FIELD, ...) naming the value, the runner and what
// it runs for the first job no runner of its name can run, or whose `env`
// no agent offers for its runner (naming those offered). A job's model is
// checked against what its runner listed in the job's environment (its own
// environment's list for a job without `env`): a library's NAME the
// environment's version lacks is refused naming the environments that have
// it, an unknown one naming the closest names. Returns one
// warning per runner the sweep names that `known` lacks, and one when jobs
// name environments but no agent said which it offers.
// `source` says where `known` came from, e.g. "as its agents reported".
// `complete`: `known` is every agent that will run the sweep (a local run's
// own): a runner it lacks, or an environment it does not offer, is refused
// rather than left unchecked, since no agent to come would run the job.
std::vector<std::string> check_runnable(const Sweep& sweep, const KnownRunners& known, const std::string& source,
                                        bool complete = false);

}  // namespace ts::sweep
