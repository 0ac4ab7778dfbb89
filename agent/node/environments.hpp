#pragma once
// Where runners run (docs/environments.md). An environment is a Python
// interpreter with a name: a venv the set-up made from a lock file
// (runners/python/requirements/NAME.lock), the system's python3 ("system",
// Debian's PyTorch), or one an operator names on an agent (--env
// NAME=PYTHON: a conda env, a container's python). A Python runner is
// started by the interpreter of the job's environment; a runner that is a
// program of its own (the LibTorch worker, an operator's --runner) runs as
// it is, in the environment it was built for, if any; the LibTorch worker is
// built once per PyTorch environment, against that environment's LibTorch.
#include <compare>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ts::agent {

struct Runner {
  std::filesystem::path program;
  bool python = false;            // started by an environment's interpreter
  std::string own_environment{};  // the one it is installed with; empty: none
  // A program of its own built for other environments too: environment ->
  // the build for it (the LibTorch worker against each venv's LibTorch).
  std::map<std::string, std::filesystem::path> builds{};
  // The runner that counts this one's FLOPs where it counts none itself
  // (--count-flops, agent/flop_counts.hpp); empty: none.
  std::string flops_counted_by{};
};

// The runners and environments installed with torchsweep, as
// share/torchsweep/runners.json (beside this program's bin/) lists them:
// the runners whose program is there, and every environment's interpreter
// as written there ("python3": the one on PATH).
struct Installation {
  std::map<std::string, Runner> runners;
  std::map<std::string, std::filesystem::path> environments;
};
Installation installation();

// One runner in one environment; "" for a runner that has none.
struct Placement {
  std::string runner, environment;
  auto operator<=>(const Placement&) const = default;
};

// Every placement worth asking about: each Python runner in every
// environment, each other runner where it was built (its own environment or
// none, and those of its builds that are among `environments`).
std::vector<Placement> placements(const std::map<std::string, Runner>& runners,
                                  const std::map<std::string, std::filesystem::path>& environments);

// How a placement's runner is started: the program (the environment's build
// of it, for a program of its own), after the environment's interpreter for
// a Python runner. Throws std::out_of_range for an
// environment that is not in `environments`.
std::vector<std::string> runner_command(const Placement& placement, const std::map<std::string, Runner>& runners,
                                        const std::map<std::string, std::filesystem::path>& environments);

}  // namespace ts::agent
