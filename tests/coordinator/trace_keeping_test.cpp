#include "coordinator/trace_keeping.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "shared/digest.hpp"
#include "shared/json_io.hpp"
#include "shared/wire/attachment.hpp"

namespace ts::coordinator {
namespace {

class TraceKeeping : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() / ("ts_trace_keeping_" + std::to_string(::getpid()));
    files_.emplace(folder_ / "t.db.artifacts");
    message_ = {{"job_id", "j"}, {"trace", wire::attachment_of(contents_)}};
    result_ = {
        {"warnings", nlohmann::json::array()},
        {"profile",
         {{"trace",
           {{"file", "profile.trace.json.gz"}, {"bytes", contents_.size()}, {"sha256", sha256_hex(contents_)}}}}}};
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  const nlohmann::json& trace() const { return result_.at("profile").at("trace"); }

  std::string contents_ = "a gzip Chrome trace";
  std::filesystem::path folder_;
  std::optional<store::ArtifactFiles> files_;
  nlohmann::json message_, result_;
};

TEST_F(TraceKeeping, TheShippedFileGoesAmongTheArtifactsBeforeTheResultSaysSo) {
  keep_trace(result_, message_, files_);
  EXPECT_EQ(trace().at("stored"), true);
  EXPECT_EQ(json_io::read_text(files_->path_of(sha256_hex(contents_)).string()), contents_);
  EXPECT_TRUE(result_.at("warnings").empty());
}

TEST_F(TraceKeeping, ADamagedOrForeignFileOrAStoreInMemoryIsNoStoredTraceAndTheResultSaysWhy) {
  auto damaged = message_;
  damaged["trace"]["bytes"] = 1;
  keep_trace(result_, damaged, files_);
  EXPECT_EQ(trace().at("stored"), false);
  EXPECT_NE(trace().at("reason").get<std::string>().find("the file shipped was damaged"), std::string::npos);
  EXPECT_EQ(result_.at("warnings").size(), 1u);

  auto foreign = message_;
  foreign["trace"] = wire::attachment_of("another file");
  keep_trace(result_, foreign, files_);
  EXPECT_EQ(trace().at("reason"), "the file shipped is not the one the result's profile.trace.sha256 names");

  keep_trace(result_, message_, std::nullopt);
  EXPECT_EQ(trace().at("reason"), "the store is in memory, with no folder beside it for artifacts");
  EXPECT_TRUE(files_->files().empty());
}

TEST_F(TraceKeeping, AResultWithoutATraceOrAMessageWithoutOneIsLeftAlone) {
  nlohmann::json plain{{"warnings", nlohmann::json::array()}};
  keep_trace(plain, message_, files_);
  EXPECT_FALSE(plain.contains("profile"));
  message_.erase("trace");
  const auto before = result_;
  keep_trace(result_, message_, files_);
  EXPECT_EQ(result_, before);
}

}  // namespace
}  // namespace ts::coordinator
