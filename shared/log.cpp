#include "shared/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "shared/errors.hpp"
#include "shared/timestamp.hpp"

namespace ts::log {
namespace {

// The one piece of process-wide state: logging is configured once in main and
// read from every thread.
struct Settings {
  std::atomic<Level> level{Level::info};
  std::mutex mutex;  // guards program and serialises lines
  std::string program = "torchsweep";
};

Settings& settings() {
  static Settings instance;
  return instance;
}

std::string_view name_of(Level level) {
  switch (level) {
    case Level::debug:
      return "DEBUG";
    case Level::info:
      return "INFO ";
    case Level::warn:
      return "WARN ";
    case Level::error:
      return "ERROR";
    case Level::off:
      break;
  }
  return "?    ";
}

}  // namespace

void set_level(Level level) { settings().level = level; }
Level level() { return settings().level; }

Level parse_level(std::string_view text) {
  if (text == "debug") return Level::debug;
  if (text == "info") return Level::info;
  if (text == "warn") return Level::warn;
  if (text == "error") return Level::error;
  if (text == "off") return Level::off;
  throw InvalidInput("log-level", "expected one of debug, info, warn, error, off; got '" + std::string(text) + "'");
}

void set_program(std::string_view name) {
  std::lock_guard lock(settings().mutex);
  settings().program = name;
}

void write(Level level, std::string_view message) {
  auto& s = settings();
  const auto stamp = utc_timestamp();
  std::lock_guard lock(s.mutex);
  std::string line;
  line.reserve(stamp.size() + s.program.size() + message.size() + 12);
  line.append(stamp).append(" ").append(name_of(level)).append(" ").append(s.program).append(": ");
  line.append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace ts::log
