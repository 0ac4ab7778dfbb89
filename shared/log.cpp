#include "shared/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "shared/errors.hpp"
#include "shared/runner_contract.hpp"

namespace ts::log {
namespace {

// Level's order is the contract's, off after the last.
static_assert(runner_contract::log_levels.size() == static_cast<std::size_t>(Level::off));

// The level's name, padded as schemas/runner_contract.json says.
std::string name_of(Level level) {
  std::string name(runner_contract::log_levels.at(static_cast<std::size_t>(level)));
  name.resize(std::max(name.size(), runner_contract::log_level_width), ' ');
  return name;
}

Level level_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return Level::debug;
    case spdlog::level::info:
      return Level::info;
    case spdlog::level::warn:
      return Level::warn;
    default:
      return Level::error;
  }
}

// spdlog's %* here: the contract's level name in place of spdlog's own.
class ContractLevel : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&, spdlog::memory_buf_t& out) override {
    const auto name = name_of(level_of(message.level));
    out.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<ContractLevel>(); }
};

// The one piece of process-wide state: logging is configured once in main and
// read from every thread. spdlog's sink writes each line whole, flushed.
struct Settings {
  std::atomic<Level> level{Level::info};
  std::mutex mutex;  // guards the formatter's replacement
  std::shared_ptr<spdlog::logger> logger = [] {
    auto made = std::make_shared<spdlog::logger>("torchsweep", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    made->set_level(spdlog::level::trace);  // filtered by `level` before formatting
    return made;
  }();

  Settings() { use_program("torchsweep"); }
  void use_program(std::string_view program) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    // TIMESTAMP LEVEL PROGRAM: MESSAGE (a '%' in the name would be a flag).
    std::string name(program);
    std::replace(name.begin(), name.end(), '%', '_');
    formatter->add_flag<ContractLevel>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %* " + name +
                                                        std::string(runner_contract::log_program_separator) + "%v");
    logger->set_formatter(std::move(formatter));
  }
};

Settings& settings() {
  static Settings instance;
  return instance;
}

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
    case Level::error:
      return spdlog::level::err;
    case Level::off:
      break;
  }
  return spdlog::level::off;
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
  auto& s = settings();
  std::lock_guard lock(s.mutex);
  s.use_program(name);
}

void write(Level level, std::string_view message) {
  if (level == Level::off) return;
  settings().logger->log(spdlog::source_loc{}, spdlog_level(level),
                         spdlog::string_view_t(message.data(), message.size()));
}

}  // namespace ts::log
