#include "agent/model_commits.hpp"

#include <unistd.h>

#include "shared/errors.hpp"
#include "shared/git.hpp"
#include "shared/log.hpp"
#include "shared/shell_command.hpp"

namespace ts::agent {

namespace fs = std::filesystem;

nlohmann::json with_model_commit(nlohmann::json job, const fs::path& cache) {
  const auto commit = job.find("model_commit");
  if (commit == job.end() || commit->is_null()) return job;
  const auto named = commit->get<std::string>();
  const auto root_field = job.find("model_root");
  if (root_field == job.end()) {
    throw InvalidInput("model_commit", "'" + named + "': only a python: or torchscript: model has a commit");
  }
  const fs::path root = root_field->get<std::string>();
  const auto top = git_output(root, "rev-parse --show-toplevel");
  if (!top) {
    throw InvalidInput("model_commit", "'" + named + "': the model root " + root.string() +
                                           " is not in a git repository, so it has no commits");
  }
  const auto sha = full_commit(root, named);
  if (!sha) throw InvalidInput("model_commit", "'" + named + "': no such commit in " + *top);
  const auto prefix = git_output(root, "rev-parse --show-prefix").value_or("");  // the root in the repository: "dir/"
  const auto tree = cache / *sha;
  if (!fs::exists(tree)) {
    // Exported beside, then renamed: a crash mid-export never leaves a half tree that later jobs would import.
    const auto partial = cache / (*sha + ".partial-" + std::to_string(::getpid()));
    fs::remove_all(partial);
    fs::create_directories(partial);
    const auto archive = partial.string() + ".tar";
    const bool exported = git_output(*top, "archive --format=tar -o " + shell_quoted(archive) + " " + *sha +
                                               (prefix.empty() ? "" : " -- " + shell_quoted(prefix))) &&
                          outputs_of({"tar -xf " + shell_quoted(archive) + " -C " + shell_quoted(partial.string())})
                                  .at(0)
                                  .status == 0;
    fs::remove(archive);
    if (!exported) {
      fs::remove_all(partial);
      throw InvalidInput("model_commit", "'" + named + "': git archive of " + *top +
                                             " failed (is the model root tracked at that commit?)");
    }
    fs::rename(partial, tree);
    log::info("model commit {} of {} exported to {}", sha->substr(0, 12), *top, tree.string());
  }
  job["model_commit"] = *sha;
  auto root_in_tree = (tree / prefix).lexically_normal();
  if (root_in_tree.filename().empty()) root_in_tree = root_in_tree.parent_path();  // "dir/" of the prefix
  job["model_root"] = root_in_tree.string();
  return job;
}

}  // namespace ts::agent
