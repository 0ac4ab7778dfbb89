// The agent reads a job's data folder only under its --data-root
// directories, and the user's models only under its --model-path ones,
// whatever the job document from the network names.
#include "agent/allowed_roots.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "shared/errors.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

class AllowedRoots : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "allowed-roots-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    fs::create_directories(base_ / "root" / "imagenet" / "n01440764");
    fs::create_directories(base_ / "outside" / "secret");
    fs::create_symlink(base_ / "outside", base_ / "root" / "escape");
    fs::create_directories(base_ / "models" / "team" / "vision");
    touch(base_ / "models" / "team" / "__init__.py");
    touch(base_ / "models" / "team" / "nets.py");
    touch(base_ / "models" / "team" / "vision" / "__init__.py");
    touch(base_ / "models" / "scripted.pt");
    touch(base_ / "outside" / "secret" / "nets.py");
    touch(base_ / "outside" / "model.pt");
    fs::create_symlink(base_ / "outside", base_ / "models" / "escape");
  }
  static void touch(const fs::path& file) { std::ofstream(file) << ""; }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_;
};

TEST_F(AllowedRoots, ARelativeFolderResolvesUnderARoot) {
  EXPECT_EQ(resolve_data_folder("imagenet", {base_ / "missing", base_ / "root"}), base_ / "root" / "imagenet");
}

TEST_F(AllowedRoots, AnAbsoluteFolderUnderARootIsAllowed) {
  EXPECT_EQ(resolve_data_folder((base_ / "root" / "imagenet").string(), {base_ / "root"}), base_ / "root" / "imagenet");
}

TEST_F(AllowedRoots, NothingOutsideTheRootsIsReadWhateverThePathSays) {
  for (const std::string& folder : {(base_ / "outside").string(), std::string("../outside"), std::string("escape"),
                                    std::string("imagenet/../../outside"), std::string("/etc")}) {
    try {
      resolve_data_folder(folder, {base_ / "root"});
      ADD_FAILURE() << folder << " was allowed";
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "data.folder");
      EXPECT_NE(std::string(error.what()).find((base_ / "root").string()), std::string::npos) << error.what();
    }
  }
}

TEST_F(AllowedRoots, AMissingFolderAndAnAgentWithoutRootsAreRefused) {
  EXPECT_THROW(resolve_data_folder("not-there", {base_ / "root"}), InvalidInput);
  try {
    resolve_data_folder("imagenet", {});
    ADD_FAILURE();
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("--data-root"), std::string::npos) << error.what();
  }
}

TEST_F(AllowedRoots, TheJobGainsThePathAndSyntheticJobsAreLeftAlone) {
  const nlohmann::json synthetic{{"model", "resnet18"}, {"data", "synthetic"}};
  EXPECT_EQ(with_data_path(synthetic, {}), synthetic);
  EXPECT_EQ(with_data_path({{"model", "resnet18"}}, {}), (nlohmann::json{{"model", "resnet18"}}));
  const auto job = with_data_path({{"data", {{"folder", "imagenet"}, {"format", "imagefolder"}}}}, {base_ / "root"});
  EXPECT_EQ(job.at("data").at("path"), (base_ / "root" / "imagenet").string());
  EXPECT_EQ(job.at("data").at("folder"), "imagenet");
}

TEST_F(AllowedRoots, AUserModelIsFoundUnderTheFirstModelRootThatHasIt) {
  const std::vector<fs::path> roots{base_ / "root", base_ / "models"};
  EXPECT_EQ(resolve_model_root("python:team.nets:build", roots), base_ / "models");
  EXPECT_EQ(resolve_model_root("python:team.vision:build", roots), base_ / "models");  // a package's __init__.py
  EXPECT_EQ(resolve_model_root("torchscript:scripted.pt", roots), base_ / "models");
  const auto job = with_model_root({{"model", "torchscript:scripted.pt"}}, roots);
  EXPECT_EQ(job.at("model_root"), (base_ / "models").string());
  EXPECT_EQ(with_model_root({{"model", "timm:resnet50"}}, {}), (nlohmann::json{{"model", "timm:resnet50"}}));
}

TEST_F(AllowedRoots, NoUserModelIsFoundOutsideTheModelRoots) {
  const std::vector<std::string> models{
      "torchscript:escape/model.pt",     "python:escape.secret.nets:build",
      "torchscript:../outside/model.pt", "torchscript:" + (base_ / "outside/model.pt").string(),
      "torchscript:missing.pt",          "python:team.missing:build"};
  for (const auto& model : models) {
    try {
      resolve_model_root(model, {base_ / "models"});
      ADD_FAILURE() << model << " was allowed";
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "model");
      EXPECT_NE(std::string(error.what()).find(model), std::string::npos) << error.what();
    }
  }
  try {
    resolve_model_root("python:team.nets:build", {});
    ADD_FAILURE();
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("--model-path"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace ts::agent
