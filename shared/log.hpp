#pragma once
// Levelled, timestamped log lines on stderr:
//   2026-11-30T04:40:00.123Z INFO  worker: message
// The level and program name are process-wide settings, set once in main.
#include <sstream>
#include <string>
#include <string_view>

namespace ts::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void set_level(Level level);
Level level();
// Parses "debug", "info", "warn", "error" or "off"; throws ts::InvalidInput otherwise.
Level parse_level(std::string_view text);
void set_program(std::string_view name);
void write(Level level, std::string_view message);

// Replaces each "{}" in `pattern` with the next argument, streamed.
template <class... Args>
std::string format(std::string_view pattern, const Args&... args) {
  std::ostringstream out;
  auto rest = pattern;
  [[maybe_unused]] auto emit = [&](const auto& arg) {
    const auto at = rest.find("{}");
    if (at == std::string_view::npos) return;
    out << rest.substr(0, at) << arg;
    rest.remove_prefix(at + 2);
  };
  (emit(args), ...);
  out << rest;
  return out.str();
}

template <class... Args>
void debug(std::string_view pattern, const Args&... args) {
  if (level() <= Level::debug) write(Level::debug, format(pattern, args...));
}
template <class... Args>
void info(std::string_view pattern, const Args&... args) {
  if (level() <= Level::info) write(Level::info, format(pattern, args...));
}
template <class... Args>
void warn(std::string_view pattern, const Args&... args) {
  if (level() <= Level::warn) write(Level::warn, format(pattern, args...));
}
template <class... Args>
void error(std::string_view pattern, const Args&... args) {
  if (level() <= Level::error) write(Level::error, format(pattern, args...));
}

}  // namespace ts::log
