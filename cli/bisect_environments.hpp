#pragma once
// PyTorch environments made on demand for a bisection with a local agent
// (docs/bisect.md): the released versions between the two sides, listed from
// the package index, and each one no environment offers made by
// torchsweep-make-environment (runners/python/make_environment.py) when a
// step first needs it: locked with hashes, wheels cached, a disk budget kept.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ts::cli {

struct EnvironmentMaking {
  bool enabled = false;
  std::string root, wheels;           // default: under $XDG_CACHE_HOME (~/.cache)/torchsweep
  std::string index_url, find_links;  // default: the package index
  std::string packages;               // the companions; empty: the tool's own list
  bool no_companions = false;
  double budget_gib = 40;
};
void add_environment_making_options(CLI::App* command, EnvironmentMaking& making);

// The steps from good to bad (environment names; `versions`: each offered
// environment's PyTorch version): the offered ones between, and for every
// released version between that none offers, "torch-VERSION", to be made;
// one a version, in the order from good to bad.
std::vector<std::string> steps_with_released(const std::vector<std::string>& offered_steps,
                                             const std::map<std::string, std::string>& versions,
                                             const EnvironmentMaking& making);

// The interpreter of environment `name`, made now for torch==`version` (or
// found made before). Throws ts::InvalidInput naming --make-environments
// when it cannot be made (the tool says why on stderr and leaves no venv).
std::filesystem::path make_environment(const EnvironmentMaking& making, const std::string& name,
                                       const std::string& version);

// Whether environment `name` was made before in the environments directory (by an earlier bisection).
bool made_before(const EnvironmentMaking& making, const std::string& name);

// The version an environment made here is named for: "torch-2.8.0" -> "2.8.0"; empty for any other name.
std::string made_version(const std::string& name);
// The name of the environment made for torch==`version`: "2.8.0" -> "torch-2.8.0".
std::string made_name(const std::string& version);

}  // namespace ts::cli
