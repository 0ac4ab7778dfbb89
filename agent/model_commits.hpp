#pragma once
// A python: model at a commit (job field model_commit; torchsweep bisect
// --repo, docs/bisect.md): the factory is imported from that commit's files
// of the git repository that holds the model root, not from the files as
// they are. The agent exports the commit's tree of the root once, with `git
// archive` (the user's repository is only read: no worktree, index or
// checkout of it changes), into its own work directory, and hands the
// runner that copy as the model root.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace ts::agent {

// `job` with model_root set to the export of model_commit's files of the
// root it names (under `cache`/SHA, made on first use and reused); a job
// without model_commit unchanged. Throws ts::InvalidInput naming
// model_commit when the root is not in a git repository, or the repository
// has no such commit.
nlohmann::json with_model_commit(nlohmann::json job, const std::filesystem::path& cache);

}  // namespace ts::agent
