#include "shared/log.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"

namespace ts::log {
namespace {

TEST(Log, FormatSubstitutesInOrderAndKeepsExtraBraces) {
  EXPECT_EQ(format("{} of {}", 3, "five"), "3 of five");
  EXPECT_EQ(format("no args {}"), "no args {}");
  EXPECT_EQ(format("{}", "a{}b"), "a{}b");
}

TEST(Log, ParsesLevelsAndRejectsOthers) {
  EXPECT_EQ(parse_level("debug"), Level::debug);
  EXPECT_EQ(parse_level("off"), Level::off);
  EXPECT_THROW(parse_level("verbose"), InvalidInput);
}

TEST(Log, LinesCarryTimestampLevelAndProgram) {
  set_program("unit");
  ::testing::internal::CaptureStderr();
  warn("disk {} full", "/tmp");
  const auto line = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(line.find("WARN  unit: disk /tmp full"), std::string::npos) << line;
  EXPECT_EQ(line.substr(4, 1), "-");    // 2026-...
  EXPECT_EQ(line.substr(23, 2), "Z ");  // ...:00.123Z
}

TEST(Log, LevelFiltersLowerMessages) {
  set_level(Level::error);
  ::testing::internal::CaptureStderr();
  info("hidden");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  set_level(Level::info);
}

}  // namespace
}  // namespace ts::log
