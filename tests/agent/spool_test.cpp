// The agent's spool: what is kept survives a restart until acknowledged.
#include "agent/spool.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

nlohmann::json outcome(const std::string& job_id, int64_t attempt) {
  return {{"type", "job_result"}, {"job_id", job_id}, {"attempt", attempt}, {"result", {{"status", "ok"}}}};
}

TEST(Spool, WhatIsKeptOutlivesTheProcessUntilAcknowledged) {
  testing::TempDirectory directory("ts_spool");
  const auto folder = directory.path() / "spool";
  {
    Spool spool(folder);
    spool.keep(outcome("s/0001", 1));
    spool.keep(outcome("s/0002", 2));
    EXPECT_TRUE(std::filesystem::exists(folder / "s_0001.attempt-1.json"));
  }
  std::ofstream(folder / ".result-crash.tmp") << "{half";  // a write a crash cut short
  Spool reopened(folder);
  ASSERT_EQ(reopened.unacknowledged().size(), 2u);
  EXPECT_EQ(reopened.unacknowledged().begin()->second, outcome("s/0001", 1));
  EXPECT_TRUE(reopened.acknowledge("s/0001", 1, /*superseded=*/false));
  EXPECT_FALSE(std::filesystem::exists(folder / "s_0001.attempt-1.json"));
  EXPECT_FALSE(reopened.acknowledge("s/0001", 1, false));  // once only
  EXPECT_EQ(reopened.unacknowledged().size(), 1u);
}

TEST(Spool, ASupersededOutcomeIsMovedAsideNotDeleted) {
  testing::TempDirectory directory("ts_spool");
  Spool spool(directory.path());
  spool.keep(outcome("s/0003", 1));
  EXPECT_TRUE(spool.acknowledge("s/0003", 1, /*superseded=*/true));
  EXPECT_TRUE(spool.unacknowledged().empty());
  EXPECT_TRUE(std::filesystem::exists(directory.path() / "superseded" / "s_0003.attempt-1.json"));
  EXPECT_TRUE(Spool(directory.path()).unacknowledged().empty());  // not delivered again
}

}  // namespace
}  // namespace ts::agent
