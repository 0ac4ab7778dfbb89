#include "store/artifacts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "simulation/synthetic_result.hpp"
#include "store/artifact_retention.hpp"
#include "store/store.hpp"

namespace ts::store {
namespace {

using simulation::judged;
using simulation::make_result;

// A distinct fake digest a test names its contents by (ArtifactFiles trusts the caller's).
std::string digest(char c) { return std::string(64, c); }

// A result whose profile names a trace of `bytes` bytes with `sha256`, stored when `stored`.
nlohmann::json profiled(const std::string& job_id, const std::string& sha256, int64_t bytes, bool stored = true) {
  auto result = make_result({.job_id = job_id});
  result["profile"] = simulation::make_profile({{"aten::addmm", 3, 0.01}}, {0.012, 0.013});
  result["profile"]["trace"] = {
      {"file", "profile.trace.json.gz"}, {"bytes", bytes}, {"sha256", sha256}, {"stored", stored}};
  return judged(result);
}

class Artifacts : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::temp_directory_path() / ("ts_artifacts_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // Stores a result with a trace of `bytes` bytes received at `received_at`, its file written first.
  void add(Store& store, const ArtifactFiles& files, const std::string& job_id, char sha, std::size_t bytes,
           const std::string& received_at) {
    files.keep(digest(sha), std::string(bytes, sha));
    ASSERT_TRUE(store.ingest_result(profiled(job_id, digest(sha), static_cast<int64_t>(bytes)), "a"));
    store.database().prepare("UPDATE results SET received_at = ? WHERE job_id = ?").bind_all(received_at, job_id).run();
  }

  int64_t rows(Store& store) {
    auto count = store.database().prepare("SELECT COUNT(*) FROM artifacts");
    count.step();
    return count.integer(0);
  }

  std::filesystem::path folder_;
};

TEST_F(Artifacts, TheFolderIsBesideTheStoreAndAFileIsNamedByItsDigest) {
  EXPECT_FALSE(ArtifactFiles::beside(":memory:"));
  const auto files = *ArtifactFiles::beside((folder_ / "t.db").string());
  EXPECT_EQ(files.directory(), folder_ / "t.db.artifacts");
  files.keep(digest('a'), "contents");
  EXPECT_EQ(files.path_of(digest('a')), folder_ / "t.db.artifacts" / "aa" / digest('a'));
  EXPECT_EQ(std::filesystem::file_size(files.path_of(digest('a'))), 8u);
  files.keep(digest('a'), "contents");  // the same contents again: one file
  std::ofstream(files.directory() / "aa" / (digest('b') + ".tmp.1")) << "a write in flight";
  EXPECT_EQ(files.files().size(), 1u);
  EXPECT_EQ(files.remove(digest('a')), 8u);
  EXPECT_FALSE(std::filesystem::exists(files.path_of(digest('a'))));
}

TEST_F(Artifacts, AResultNamesItsTraceOnlyWhenTheCoordinatorStoredIt) {
  Store store((folder_ / "t.db").string());
  EXPECT_TRUE(store.ingest_result(profiled("kept", digest('a'), 10), "a"));
  EXPECT_TRUE(store.ingest_result(profiled("over", digest('b'), 10, false), "a"));
  EXPECT_TRUE(store.ingest_result(judged(make_result({.job_id = "plain"})), "a"));
  auto select = store.database().prepare("SELECT job_id, kind, sha256, bytes FROM artifacts");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.text(0), "kept");
  EXPECT_EQ(select.text(1), "trace");
  EXPECT_EQ(select.text(2), digest('a'));
  EXPECT_EQ(select.integer(3), 10);
  EXPECT_FALSE(select.step());
}

TEST_F(Artifacts, GcDropsOldTracesThenTheOldestBeyondTheTotalAndKeepsSharedFilesOnce) {
  Store store((folder_ / "t.db").string());
  const auto files = *ArtifactFiles::beside(store.path());
  add(store, files, "newest", 'c', 300, "2026-12-06T10:00:00.000Z");
  add(store, files, "shares", 'c', 300, "2026-12-06T09:00:00.000Z");  // the same file as the newest
  add(store, files, "middle", 'b', 200, "2026-12-06T08:00:00.000Z");
  add(store, files, "oldest", 'a', 100, "2026-12-06T07:00:00.000Z");
  add(store, files, "ancient", 'd', 50, "2020-01-01T00:00:00.000Z");

  RetentionOptions options;
  options.older_than_days = 365;
  options.max_total_bytes = 350;
  options.dry_run = true;
  auto outcome = collect_garbage(store.database(), files, options);
  EXPECT_EQ(outcome.rows_dropped, 3);  // ancient by age; middle, then oldest though it would fit, by size
  EXPECT_EQ(outcome.files_removed, 3);
  EXPECT_EQ(outcome.bytes_freed, 350u);
  EXPECT_EQ(rows(store), 5);  // a dry run
  EXPECT_EQ(files.files().size(), 4u);

  options.dry_run = false;
  outcome = collect_garbage(store.database(), files, options);
  EXPECT_EQ(outcome.rows_dropped, 3);
  EXPECT_EQ(outcome.files_kept, 1);
  EXPECT_EQ(outcome.bytes_kept, 300u);
  EXPECT_EQ(rows(store), 2);
  EXPECT_EQ(files.files().size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(files.path_of(digest('c'))));
  // The results stay, their profile summaries with them.
  auto results = store.database().prepare("SELECT COUNT(*) FROM results");
  results.step();
  EXPECT_EQ(results.integer(0), 5);
}

TEST_F(Artifacts, AFileNoRowNamesGoesOnlyOnceOlderThanTheGrace) {
  Store store((folder_ / "t.db").string());
  const auto files = *ArtifactFiles::beside(store.path());
  files.keep(digest('e'), "a write whose result never came");
  RetentionOptions options;
  EXPECT_EQ(collect_garbage(store.database(), files, options).files_removed, 0);  // perhaps its row is coming
  options.orphan_grace = std::chrono::seconds(-1);
  const auto outcome = collect_garbage(store.database(), files, options);
  EXPECT_EQ(outcome.rows_dropped, 0);
  EXPECT_EQ(outcome.files_removed, 1);
  EXPECT_TRUE(files.files().empty());
}

}  // namespace
}  // namespace ts::store
