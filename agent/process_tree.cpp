#include "agent/process_tree.hpp"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ts::agent {
namespace {

struct ProcessStat {
  pid_t parent = 0;
  uint64_t start_time = 0;
};

// Fields 4 (ppid) and 22 (starttime) of /proc/PID/stat; the command name
// (field 2) may hold spaces and parentheses, so parsing starts after its last ')'.
std::optional<ProcessStat> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  ProcessStat stat;
  for (int index = 3; fields >> field; ++index) {
    if (index == 4) stat.parent = static_cast<pid_t>(std::stol(field));
    if (index == 22) {
      stat.start_time = std::stoull(field);
      return stat;
    }
  }
  return std::nullopt;
}

}  // namespace

void ProcessTree::observe() {
  if (!scan_) return;
  std::map<pid_t, ProcessStat> all;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (auto stat = read_stat(pid)) all[pid] = *stat;
  }
  std::vector<pid_t> frontier{root_};
  while (!frontier.empty()) {
    const auto parent = frontier.back();
    frontier.pop_back();
    for (const auto& [pid, stat] : all) {
      if (stat.parent != parent) continue;
      seen_[pid] = stat.start_time;
      frontier.push_back(pid);
    }
  }
}

void ProcessTree::signal_all(int signal) {
  ::kill(-root_, signal);
  for (const auto& [pid, start_time] : seen_) {
    const auto stat = read_stat(pid);
    if (stat && stat->start_time == start_time) ::kill(pid, signal);
  }
}

}  // namespace ts::agent
