#include "shared/log.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "shared/errors.hpp"

namespace ts::log {
namespace {

TEST(Log, FormatSubstitutesInOrderAndHonoursFormatSpecs) {
  EXPECT_EQ(format("{} of {}", 3, "five"), "3 of five");
  EXPECT_EQ(format("{}", "a{}b"), "a{}b");
  EXPECT_EQ(format("{{}} stays {}", "literal"), "{} stays literal");
  // The hand-made formatter ignored these ("{:.1f}" printed the double whole).
  EXPECT_EQ(format("{:.1f}% of {:>4}", 12.345, 7), "12.3% of    7");
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
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  ::testing::internal::CaptureStderr();
  error("boom");
  debug("below the level: nothing");
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("Z ERROR unit: boom\n"), std::string::npos);
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
