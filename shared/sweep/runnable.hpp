#pragma once
// Typos caught before a night is spent: whether each job of a sweep names a
// model some runner of its name can run, as the runners said (their
// --list-models, reported in the agents' capabilities, or asked locally by
// `submit --dry-run`).
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "shared/sweep/sweep.hpp"

namespace ts::sweep {

// Runner name -> the models it runs; a runner listed with no models said
// nothing (its --list-models did not answer) and is not checked.
using RunnerModels = std::map<std::string, std::set<std::string>>;

// The runners and models in agents' capabilities ("runners", "models").
RunnerModels runner_models(const std::vector<nlohmann::json>& capabilities);

// Throws ts::InvalidInput("model", ...) naming the model, the runner and
// what it runs for the first job no runner of its name can run; returns one
// warning per runner the sweep names that `known` lacks.
// `source` says where `known` came from, e.g. "as its agents reported".
std::vector<std::string> check_runnable(const Sweep& sweep, const RunnerModels& known, const std::string& source);

}  // namespace ts::sweep
