#include "cli/bisect_steps.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "shared/errors.hpp"
#include "shared/git.hpp"

namespace ts::cli {
namespace {

std::string listed(const std::map<std::string, std::string>& versions) {
  std::string text;
  for (const auto& [name, version] : versions) text += (text.empty() ? "" : ", ") + name + " (" + version + ")";
  return text.empty() ? "none" : text;
}

}  // namespace

std::map<std::string, std::string> environment_versions(const std::vector<nlohmann::json>& capabilities,
                                                  const std::string& runner) {
  std::map<std::string, std::string> versions;
  for (const auto& agent : capabilities) {
    const auto environments = agent.find("environments");
    if (environments == agent.end() || !environments->is_object()) continue;
    for (const auto& [name, environment] : environments->items()) {
      const auto runs = environment.value("runners", nlohmann::json::object());
      if (!runs.contains(runner)) continue;
      const auto torch = runs.at(runner).value("torch", nlohmann::json());
      if (torch.is_string()) versions.emplace(name, torch.get<std::string>());
    }
  }
  return versions;
}

std::optional<std::string> environment_offering(const std::map<std::string, std::string>& versions,
                                                const std::string& version) {
  for (const auto& [name, offered] : versions) {
    if (version_numbers(offered) == version_numbers(version)) return name;
  }
  return std::nullopt;
}

std::vector<int> version_numbers(const std::string& version) {
  std::vector<int> numbers;
  std::size_t at = 0;
  while (at < version.size() && std::isdigit(static_cast<unsigned char>(version[at]))) {
    std::size_t end = at;
    while (end < version.size() && std::isdigit(static_cast<unsigned char>(version[end]))) ++end;
    numbers.push_back(std::stoi(version.substr(at, end - at)));
    if (end >= version.size() || version[end] != '.') break;
    at = end + 1;
  }
  return numbers;
}

std::vector<std::string> environments_between(const std::vector<nlohmann::json>& capabilities,
                                              const std::string& runner, const std::string& good,
                                              const std::string& bad) {
  const auto versions = environment_versions(capabilities, runner);
  for (const auto& [option, name] : {std::pair{"--good", good}, {"--bad", bad}}) {
    if (!versions.contains(name)) {
      throw InvalidInput(option, "env=" + name + ": no agent that registered offers it with runner '" + runner +
                                     "' and a PyTorch version (offered: " + listed(versions) + ")");
    }
  }
  const auto from = version_numbers(versions.at(good)), to = version_numbers(versions.at(bad));
  if (from == to) {
    throw InvalidInput("--bad", "env=" + bad + " runs the same PyTorch as env=" + good + " (" + versions.at(bad) +
                                    "): there is no version between them to bisect");
  }
  const bool upward = from < to;
  std::map<std::vector<int>, std::string> between;  // one environment a version, the first name
  for (const auto& [name, version] : versions) {
    const auto numbers = version_numbers(version);
    if (upward ? (from < numbers && numbers < to) : (to < numbers && numbers < from)) between.emplace(numbers, name);
  }
  std::vector<std::string> steps{good};
  for (const auto& [numbers, name] : between) steps.push_back(name);
  if (!upward) std::reverse(steps.begin() + 1, steps.end());
  steps.push_back(bad);
  return steps;
}

std::vector<std::string> commits_between(const std::filesystem::path& repo, const std::string& good,
                                         const std::string& bad) {
  if (!git_output(repo, "rev-parse --git-dir")) {
    throw InvalidInput("--repo", repo.string() + " is not a git repository");
  }
  std::vector<std::string> ends;
  for (const auto& [option, name] : {std::pair{"--good", good}, {"--bad", bad}}) {
    const auto sha = full_commit(repo, name);
    if (!sha) throw InvalidInput(option, "'" + name + "' is no commit of " + repo.string());
    ends.push_back(*sha);
  }
  if (ends[0] == ends[1]) throw InvalidInput("--bad", "'" + bad + "' is the same commit as --good");
  if (!git_output(repo, "merge-base --is-ancestor " + ends[0] + " " + ends[1])) {
    throw InvalidInput("--good", "'" + good + "' is not an ancestor of --bad '" + bad + "' in " + repo.string());
  }
  std::vector<std::string> steps{ends[0]};
  std::istringstream lines(
      git_output(repo, "rev-list --reverse --first-parent --ancestry-path " + ends[0] + ".." + ends[1]).value_or(""));
  for (std::string sha; std::getline(lines, sha);) {
    if (!sha.empty()) steps.push_back(sha);
  }
  if (steps.back() != ends[1]) steps.push_back(ends[1]);
  return steps;
}

}  // namespace ts::cli
