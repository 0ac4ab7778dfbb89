// The agent reads a job's data folder only under its --data-root
// directories, whatever the job document from the network names.
#include "agent/data_roots.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "shared/errors.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

class DataRoots : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "data-roots-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    fs::create_directories(base_ / "root" / "imagenet" / "n01440764");
    fs::create_directories(base_ / "outside" / "secret");
    fs::create_symlink(base_ / "outside", base_ / "root" / "escape");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_;
};

TEST_F(DataRoots, ARelativeFolderResolvesUnderARoot) {
  EXPECT_EQ(resolve_data_folder("imagenet", {base_ / "missing", base_ / "root"}), base_ / "root" / "imagenet");
}

TEST_F(DataRoots, AnAbsoluteFolderUnderARootIsAllowed) {
  EXPECT_EQ(resolve_data_folder((base_ / "root" / "imagenet").string(), {base_ / "root"}), base_ / "root" / "imagenet");
}

TEST_F(DataRoots, NothingOutsideTheRootsIsReadWhateverThePathSays) {
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

TEST_F(DataRoots, AMissingFolderAndAnAgentWithoutRootsAreRefused) {
  EXPECT_THROW(resolve_data_folder("not-there", {base_ / "root"}), InvalidInput);
  try {
    resolve_data_folder("imagenet", {});
    ADD_FAILURE();
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("--data-root"), std::string::npos) << error.what();
  }
}

TEST_F(DataRoots, TheJobGainsThePathAndSyntheticJobsAreLeftAlone) {
  const nlohmann::json synthetic{{"model", "resnet18"}, {"data", "synthetic"}};
  EXPECT_EQ(with_data_path(synthetic, {}), synthetic);
  EXPECT_EQ(with_data_path({{"model", "resnet18"}}, {}), (nlohmann::json{{"model", "resnet18"}}));
  const auto job = with_data_path({{"data", {{"folder", "imagenet"}, {"format", "imagefolder"}}}}, {base_ / "root"});
  EXPECT_EQ(job.at("data").at("path"), (base_ / "root" / "imagenet").string());
  EXPECT_EQ(job.at("data").at("folder"), "imagenet");
}

}  // namespace
}  // namespace ts::agent
