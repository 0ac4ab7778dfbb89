#include "agent/model_commits.hpp"

#include <unistd.h>

#include "shared/shell_command.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

// `git -C ROOT ARGS` (ARGS already quoted): its output without the trailing
// newline, and whether it succeeded.
CommandOutput git(const fs::path& root, const std::string& args) {
  auto output = outputs_of({"git -C " + shell_quoted(root.string()) + " " + args + " 2>/dev/null"}).at(0);
  while (!output.out.empty() && output.out.back() == '\n') output.out.pop_back();
  return output;
}

}  // namespace

nlohmann::json with_model_commit(nlohmann::json job, const fs::path& cache) {
  const auto commit = job.find("model_commit");
  if (commit == job.end() || commit->is_null()) return job;
  const auto named = commit->get<std::string>();
  const auto root_field = job.find("model_root");
  if (root_field == job.end()) {
    throw InvalidInput("model_commit", "'" + named + "': only a python: or torchscript: model has a commit");
  }
  const fs::path root = root_field->get<std::string>();
  const auto top = git(root, "rev-parse --show-toplevel");
  if (top.status != 0) {
    throw InvalidInput("model_commit", "'" + named + "': the model root " + root.string() +
                                           " is not in a git repository, so it has no commits");
  }
  const auto sha = git(root, "rev-parse --verify --quiet " + shell_quoted(named + "^{commit}"));
  if (sha.status != 0 || sha.out.empty()) {
    throw InvalidInput("model_commit", "'" + named + "': no such commit in " + top.out);
  }
  const auto prefix = git(root, "rev-parse --show-prefix").out;  // the root within the repository, "" or "dir/"
  const auto tree = cache / sha.out;
  if (!fs::exists(tree)) {
    // Exported beside, then renamed: a crash mid-export never leaves a half tree that later jobs would import.
    const auto partial = cache / (sha.out + ".partial-" + std::to_string(::getpid()));
    fs::remove_all(partial);
    fs::create_directories(partial);
    const auto archive = partial.string() + ".tar";
    const auto archived = git(top.out, "archive --format=tar -o " + shell_quoted(archive) + " " + sha.out +
                                           (prefix.empty() ? "" : " -- " + shell_quoted(prefix)));
    const auto exported =
        archived.status != 0
            ? archived
            : outputs_of({"tar -xf " + shell_quoted(archive) + " -C " + shell_quoted(partial.string())}).at(0);
    fs::remove(archive);
    if (exported.status != 0) {
      fs::remove_all(partial);
      throw InvalidInput("model_commit", "'" + named + "': git archive of " + top.out +
                                             " failed (is the model root tracked at that commit?)");
    }
    fs::rename(partial, tree);
    log::info("model commit {} of {} exported to {}", sha.out.substr(0, 12), top.out, tree.string());
  }
  job["model_commit"] = sha.out;
  auto root_in_tree = (tree / prefix).lexically_normal();
  if (root_in_tree.filename().empty()) root_in_tree = root_in_tree.parent_path();  // "dir/" of the prefix
  job["model_root"] = root_in_tree.string();
  return job;
}

}  // namespace ts::agent
