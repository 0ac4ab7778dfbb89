// The coordinator's group commit, and what it does when SQLite has already
// rolled its transaction back (disk full): the failing write's error is the
// one reported, and nothing commits or acknowledges afterwards.
#include "coordinator/write_batch.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/temp_directory.hpp"

namespace ts::coordinator {
namespace {

class Batch : public ::testing::Test {
 protected:
  void SetUp() override { database_.execute("CREATE TABLE t (x BLOB)"); }
  void insert(std::size_t bytes) {
    auto statement = database_.prepare("INSERT INTO t VALUES (?)");
    statement.bind_all(std::string(bytes, 'x'));
    statement.step();
  }
  std::int64_t rows() {
    auto count = database_.prepare("SELECT count(*) FROM t");
    count.step();
    return count.integer(0);
  }
  testing::TempDirectory directory_{"ts_write_batch"};
  store::Database database_{(directory_.path() / "store.db").string()};
  boost::asio::io_context io_;
};

TEST_F(Batch, WritesCommitTogetherAndAcknowledgementsFollowTheCommit) {
  WriteBatch batch(io_, database_);
  batch.open();
  insert(10);
  bool acknowledged = false;
  batch.after_commit([&] { acknowledged = true; });
  insert(10);
  EXPECT_FALSE(acknowledged);
  io_.run();  // the commit posted behind the queued work
  EXPECT_TRUE(acknowledged);
  EXPECT_EQ(rows(), 2);
}

TEST_F(Batch, AfterSQLiteRolledBackOnAFullDiskNothingCommitsOrAcknowledges) {
  WriteBatch batch(io_, database_);
  database_.execute("PRAGMA max_page_count = 16");  // a full disk at 64 KiB
  batch.open();
  insert(10);
  bool acknowledged = false;
  batch.after_commit([&] { acknowledged = true; });
  try {
    insert(1 << 20);
    FAIL() << "a 1 MiB row fit in 64 KiB";
  } catch (const store::SqliteError& error) {
    EXPECT_NE(std::string(error.what()).find("database or disk is full"), std::string::npos) << error.what();
  }
  // Before: the posted commit threw "cannot commit - no transaction is
  // active" on top of the real error, and the destructor logged it again.
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(io_.run());
  EXPECT_NO_THROW(batch.commit());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(acknowledged);
  EXPECT_EQ(rows(), 0);
}

TEST_F(Batch, ACommitThatFailsIsNotTriedAgain) {
  auto batch = std::make_unique<WriteBatch>(io_, database_);
  batch->open();
  insert(10);
  // A deferred foreign-key violation fails COMMIT and leaves the transaction open.
  database_.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
  database_.execute("CREATE TABLE child (parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
  database_.execute("INSERT INTO child VALUES (7)");
  EXPECT_THROW(batch->commit(), store::SqliteError);
  // The caller owns that failure; the batch is closed and its destructor stays quiet.
  database_.execute("ROLLBACK");
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(batch.reset());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace ts::coordinator
