#include "cli/bisect_environments.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/bisect_steps.hpp"
#include "shared/beside_this_program.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/shell_command.hpp"
#include "shared/user_cache.hpp"

namespace ts::cli {
namespace {

constexpr std::string_view made_prefix = "torch-";

std::filesystem::path cache_home() {
  const auto cache = user_cache_directory();
  return cache.empty() ? std::filesystem::temp_directory_path() / "torchsweep" : cache;
}

// The tool's command line up to its subcommand's own arguments.
std::string tool() { return shell_quoted(beside_this_program("torchsweep-make-environment").string()); }

std::string index_arguments(const EnvironmentMaking& making) {
  if (!making.find_links.empty()) return " --find-links " + shell_quoted(making.find_links);
  return making.index_url.empty() ? "" : " --index-url " + shell_quoted(making.index_url);
}

std::string root_of(const EnvironmentMaking& making) {
  return making.root.empty() ? (cache_home() / "environments").string() : making.root;
}

}  // namespace

void add_environment_making_options(CLI::App* command, EnvironmentMaking& making) {
  command->add_flag("--make-environments", making.enabled,
                    "over environments, with a local agent: the steps are every released PyTorch between the two "
                    "sides, and those no environment offers are made when first needed");
  command->add_option("--environments-dir", making.root,
                      "where made environments go (default: $XDG_CACHE_HOME/torchsweep/environments)");
  command->add_option("--wheels-dir", making.wheels, "their wheel cache (default: $XDG_CACHE_HOME/torchsweep/wheels)");
  command->add_option("--index-url", making.index_url, "the package index to list and fetch from (default: pip's)");
  command->add_option("--find-links", making.find_links, "a folder of wheels to use instead of an index");
  command->add_option("--environment-packages", making.packages,
                      "the companions made environments get beside torch (default: the tool's: torchvision, timm, "
                      "transformers, and what the harness needs)");
  command->add_flag("--no-companions", making.no_companions, "made environments get torch alone");
  command->add_option("--disk-budget-gib", making.budget_gib, "made environments and their wheels together, at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

bool made_before(const EnvironmentMaking& making, const std::string& name) {
  return !made_version(name).empty() && std::filesystem::exists(std::filesystem::path(root_of(making)) / name);
}

std::string made_version(const std::string& name) {
  return name.starts_with(made_prefix) ? name.substr(made_prefix.size()) : std::string();
}

std::string made_name(const std::string& version) { return std::string(made_prefix) + version; }

std::vector<std::string> steps_with_released(const std::vector<std::string>& offered_steps,
                                             const std::map<std::string, std::string>& versions,
                                             const EnvironmentMaking& making) {
  const auto& good = versions.at(offered_steps.front());
  const auto& bad = versions.at(offered_steps.back());
  const auto listed = outputs_of({tool() + " released torch --from " + shell_quoted(good) + " --to " +
                                  shell_quoted(bad) + index_arguments(making)})
                          .at(0);
  if (listed.status != 0 || !nlohmann::json::accept(listed.out)) {
    throw InvalidInput("--make-environments",
                       "the released versions between " + good + " and " + bad + " could not be listed (above)");
  }
  std::map<std::vector<int>, std::string> between;  // one environment a version, an offered one first
  for (std::size_t i = 1; i + 1 < offered_steps.size(); ++i) {
    between.emplace(version_numbers(versions.at(offered_steps[i])), offered_steps[i]);
  }
  for (const auto& version : nlohmann::json::parse(listed.out)) {
    between.emplace(version_numbers(version.get<std::string>()), made_name(version.get<std::string>()));
  }
  std::vector<std::string> steps{offered_steps.front()};
  for (const auto& [numbers, name] : between) steps.push_back(name);
  if (version_numbers(bad) < version_numbers(good)) std::reverse(steps.begin() + 1, steps.end());
  steps.push_back(offered_steps.back());
  return steps;
}

std::filesystem::path make_environment(const EnvironmentMaking& making, const std::string& name,
                                       const std::string& version) {
  const auto wheels = making.wheels.empty() ? (cache_home() / "wheels").string() : making.wheels;
  if (made_before(making, name)) {
    log::info("environment {} (torch {}) made before, in {}", name, version, root_of(making));
  } else {
    log::info("making environment {} (torch {}) in {}", name, version, root_of(making));
  }
  std::string command = tool() + " make " + shell_quoted(name) + " --pin " + shell_quoted("torch==" + version) +
                        " --root " + shell_quoted(root_of(making)) + " --wheels " + shell_quoted(wheels) +
                        " --budget-gib " + std::to_string(making.budget_gib) + index_arguments(making);
  if (making.no_companions) {
    command += " --with ''";
  } else if (!making.packages.empty()) {
    command += " --with " + shell_quoted(making.packages);
  }
  auto made = outputs_of({command}).at(0);
  while (!made.out.empty() && (made.out.back() == '\n' || made.out.back() == ' ')) made.out.pop_back();
  if (made.status != 0 || made.out.empty()) {
    throw InvalidInput("--make-environments", "environment " + name + " (torch " + version +
                                                  ") could not be made (above); the bisection stops here");
  }
  return made.out;
}

}  // namespace ts::cli
