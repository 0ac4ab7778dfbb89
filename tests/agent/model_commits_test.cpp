// A python: model at a commit (agent/model_commits.hpp): the agent exports
// that commit's files of the model root from the git repository holding it,
// hands the runner the copy, and leaves the user's repository as it was.
#include "agent/model_commits.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "shared/errors.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a shell command in `directory`, failing the test if it fails.
void sh(const fs::path& directory, const std::string& command) {
  ASSERT_EQ(std::system(("cd '" + directory.string() + "' && " + command + " >/dev/null 2>&1").c_str()), 0) << command;
}

std::string head(const fs::path& repo) {
  const auto file = repo / ".head";
  std::system(("git -C '" + repo.string() + "' rev-parse HEAD > '" + file.string() + "'").c_str());
  auto sha = slurp(file);
  fs::remove(file);
  return sha.substr(0, sha.find('\n'));
}

TEST(ModelCommits, TheRunnerGetsTheCommitsFilesOfTheRootAndTheRepositoryIsLeftAsItWas) {
  testing::TempDirectory temp("ts_model_commits");
  const auto repo = temp / "repo";
  fs::create_directories(repo / "models/team");
  sh(repo, "git init -q . && git config user.email t@example.invalid && git config user.name t");
  std::ofstream(repo / "models/team/ranker.py") << "SCALE = 1.0\n";
  sh(repo, "git add -A && git commit -q -m first");
  const auto first = head(repo);
  std::ofstream(repo / "models/team/ranker.py") << "SCALE = 1.5\n";
  sh(repo, "git commit -q -am second");
  std::ofstream(repo / "models/team/ranker.py") << "SCALE = 9.9  # uncommitted\n";

  const auto cache = temp / "work/model-commits";
  nlohmann::json job{{"model", "python:team.ranker:build"},
                     {"model_root", (repo / "models").string()},
                     {"model_commit", first.substr(0, 10)}};
  const auto resolved = with_model_commit(job, cache);
  EXPECT_EQ(resolved.at("model_commit"), first) << "the full commit";
  const fs::path root = resolved.at("model_root").get<std::string>();
  EXPECT_EQ(root, (cache / first / "models").lexically_normal());
  EXPECT_EQ(slurp(root / "team/ranker.py"), "SCALE = 1.0\n");
  // Only the model root's files are exported, and the working tree is untouched.
  EXPECT_FALSE(fs::exists(cache / first / ".git"));
  EXPECT_EQ(slurp(repo / "models/team/ranker.py"), "SCALE = 9.9  # uncommitted\n");
  // Made once: a second job reuses the export.
  std::ofstream(root / "team/marker") << "kept";
  EXPECT_TRUE(fs::exists(fs::path(with_model_commit(job, cache).at("model_root").get<std::string>()) / "team/marker"));
  // Without a commit the job is as it was.
  job.erase("model_commit");
  EXPECT_EQ(with_model_commit(job, cache), job);
}

TEST(ModelCommits, AnUnknownCommitOrARootOutsideARepositoryIsRefusedNamingTheField) {
  testing::TempDirectory temp("ts_model_commits");
  fs::create_directories(temp / "plain/team");
  const nlohmann::json outside{{"model", "python:team.ranker:build"},
                               {"model_root", (temp / "plain").string()},
                               {"model_commit", "abc1234"}};
  try {
    with_model_commit(outside, temp / "cache");
    FAIL() << "a root outside a repository was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "model_commit");
    EXPECT_NE(std::string(error.what()).find("not in a git repository"), std::string::npos) << error.what();
  }
  sh(temp / "plain", "git init -q . && git config user.email t@example.invalid && git config user.name t && "
                     "touch team/ranker.py && git add -A && git commit -q -m one");
  auto unknown = outside;
  unknown["model_commit"] = "0123456789abcdef";
  try {
    with_model_commit(unknown, temp / "cache");
    FAIL() << "an unknown commit was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("no such commit"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(temp / "cache")) << "nothing half-made";
}

}  // namespace
}  // namespace ts::agent
