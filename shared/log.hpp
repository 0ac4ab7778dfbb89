#pragma once
// Levelled, timestamped log lines on stderr, written through spdlog in the
// runner contract's format (schemas/runner_contract.json):
//   2026-11-30T04:40:00.123Z INFO  worker: message
// Messages are {fmt} format strings, checked at compile time: "{:.1f}" and
// the other format specs are honoured. The level and program name are
// process-wide settings, set once in main.
#include <fmt/format.h>
#include <fmt/std.h>

#include <string>
#include <string_view>
#include <utility>

namespace ts::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void set_level(Level level);
Level level();
// Parses "debug", "info", "warn", "error" or "off"; throws ts::InvalidInput otherwise.
Level parse_level(std::string_view text);
void set_program(std::string_view name);
void write(Level level, std::string_view message);

template <class... Args>
std::string format(fmt::format_string<Args...> pattern, Args&&... args) {
  return fmt::format(pattern, std::forward<Args>(args)...);
}

template <class... Args>
void debug(fmt::format_string<Args...> pattern, Args&&... args) {
  if (level() <= Level::debug) write(Level::debug, fmt::format(pattern, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> pattern, Args&&... args) {
  if (level() <= Level::info) write(Level::info, fmt::format(pattern, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> pattern, Args&&... args) {
  if (level() <= Level::warn) write(Level::warn, fmt::format(pattern, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> pattern, Args&&... args) {
  if (level() <= Level::error) write(Level::error, fmt::format(pattern, std::forward<Args>(args)...));
}

}  // namespace ts::log
