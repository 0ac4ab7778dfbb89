#include "agent/node/process_tree.hpp"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "shared/json_io.hpp"
#include "shared/log.hpp"

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

bool same_process(pid_t pid, uint64_t start_time) {
  const auto stat = read_stat(pid);
  return stat && stat->start_time == start_time;
}

}  // namespace

bool ProcessTree::descends_from(pid_t pid, pid_t ancestor) {
  // A pid's parent chain ends at 1 (or 0 in a pid namespace); bounded in
  // case a recycled pid makes a loop while it is read.
  for (int depth = 0; depth < 64 && pid > 1; ++depth) {
    const auto stat = read_stat(pid);
    if (!stat) return false;
    if (stat->parent == ancestor) return true;
    pid = stat->parent;
  }
  return false;
}

ProcessTree::ProcessTree(pid_t root, bool scan) : root_(root), scan_(scan) {
  if (const auto stat = read_stat(root)) root_start_time_ = stat->start_time;
}

bool ProcessTree::observe() {
  if (!scan_) return false;
  const auto before = seen_.size();
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
  return seen_.size() != before;
}

void ProcessTree::signal_all(int signal) {
  ::kill(-root_, signal);
  for (const auto& [pid, start_time] : seen_) {
    if (same_process(pid, start_time)) ::kill(pid, signal);
  }
}

void ProcessTree::save(const std::filesystem::path& file) const {
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& [pid, start_time] : seen_) processes.push_back({pid, start_time});
  json_io::write_atomically(file.string(),
                            {{"root", {root_, root_start_time_}}, {"descendants", std::move(processes)}});
}

std::size_t ProcessTree::kill_recorded(const std::filesystem::path& file) {
  nlohmann::json saved;
  try {
    saved = json_io::read(file.string());
  } catch (const std::exception& error) {
    log::warn("{}: not a process record ({}); nothing killed", file.string(), error.what());
    return 0;
  }
  std::size_t killed = 0;
  const auto kill_if_same = [&](const nlohmann::json& entry, bool group) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_integer() || !entry[1].is_number_unsigned())
      return;
    const auto pid = entry[0].get<pid_t>();
    if (pid <= 1 || !same_process(pid, entry[1].get<uint64_t>())) return;
    ::kill(pid, SIGKILL);
    if (group) ::kill(-pid, SIGKILL);  // what else the runner started in its group
    ++killed;
  };
  kill_if_same(saved.value("root", nlohmann::json()), true);
  for (const auto& entry : saved.value("descendants", nlohmann::json::array())) kill_if_same(entry, false);
  return killed;
}

}  // namespace ts::agent
