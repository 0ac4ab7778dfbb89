#pragma once
// The steps of a bisection (docs/bisect.md), the good side first and the bad
// side last: the environments the agents offer, in PyTorch version order,
// or the commits of the user's repository between two.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ts::cli {

// Environment name -> the PyTorch version it reports with `runner`, over
// every agent of `capabilities` (the first agent's word for a name).
std::map<std::string, std::string> environment_versions(const std::vector<nlohmann::json>& capabilities,
                                                        const std::string& runner);

// The environments of `capabilities` (every registered agent's hello, as
// the store keeps them) that run `runner`, from `good` to `bad` by the
// PyTorch version each reports there: good, every environment whose version
// lies strictly between theirs (one a version, in the order from good to
// bad, so a downgrade bisects too), bad. Throws ts::InvalidInput naming
// --good or --bad for an environment no agent offers with the runner, or
// two sides of one version.
std::vector<std::string> environments_between(const std::vector<nlohmann::json>& capabilities,
                                              const std::string& runner, const std::string& good,
                                              const std::string& bad);

// The commits of the git repository `repo` from `good` to `bad`, full SHAs:
// good, then every commit of bad's first-parent line after good, bad last.
// Throws ts::InvalidInput naming --repo, --good or --bad for a path that is
// not a repository, a name that is no commit, or a good that is not an
// ancestor of bad.
std::vector<std::string> commits_between(const std::filesystem::path& repo, const std::string& good,
                                         const std::string& bad);

// A PyTorch version's numbers for ordering: "2.10.0+cpu" -> {2, 10, 0}.
std::vector<int> version_numbers(const std::string& version);

// The environment of `versions` (name -> PyTorch version, environment_versions()) that runs `version`, if one does.
std::optional<std::string> environment_offering(const std::map<std::string, std::string>& versions,
                                                const std::string& version);

}  // namespace ts::cli
