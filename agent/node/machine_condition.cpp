#include "agent/node/machine_condition.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ts::agent {
namespace {

// A window shorter than this is not judged: the kernel counts CPU time in
// ticks (10 ms), a few of which would make a short job look busy.
constexpr double shortest_judged_window_s = 1.0;

std::optional<std::string> first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

double tick_seconds() {
  static const double seconds = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return seconds;
}

// The "some" line's total (microseconds in which at least one task waited)
// of a PSI file; empty where the kernel has no pressure accounting.
std::optional<double> stall_seconds(const std::filesystem::path& file) {
  const auto line = first_line(file);
  if (!line || !line->starts_with("some ")) return std::nullopt;
  const auto at = line->find("total=");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(line->substr(at + 6)) * 1e-6;
}

// The value of a "0"/"1" flag file; empty where it does not exist.
std::optional<bool> flag(const std::filesystem::path& file) {
  const auto line = first_line(file);
  if (!line || line->empty()) return std::nullopt;
  return line->front() == '1';
}

std::string percent(double share) { return std::to_string(static_cast<int>(std::lround(share * 100))) + "%"; }

nlohmann::json optional_json(const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); }

}  // namespace

MachineWindow::MachineWindow(std::filesystem::path root, Clock::time_point now) : root_(std::move(root)), opened_(now) {
  start_ = read();
  std::ifstream stat(root_ / "proc/stat");
  int cpus = 0;
  for (std::string line; std::getline(stat, line);)
    if (line.starts_with("cpu") && line.size() > 3 && std::isdigit(static_cast<unsigned char>(line[3]))) ++cpus;
  cpus_ = std::max(cpus, 1);
}

MachineWindow::Counters MachineWindow::read() const {
  Counters counters;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is in user's)
  if (const auto line = first_line(root_ / "proc/stat"); line && line->starts_with("cpu ")) {
    std::istringstream fields(line->substr(4));
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    counters.busy_s = (user + nice + system + irq + softirq) * tick_seconds();
    counters.steal_s = steal * tick_seconds();
  }
  // The agent's own CPU time and its reaped children's (fields 14 to 17,
  // counted after the command name's closing parenthesis).
  if (const auto line = first_line(root_ / "proc/self/stat")) {
    std::istringstream fields(line->substr(line->rfind(')') + 1));
    std::vector<std::string> values{std::istream_iterator<std::string>(fields), {}};
    if (values.size() > 14)
      counters.own_s = (std::stod(values[11]) + std::stod(values[12]) + std::stod(values[13]) + std::stod(values[14])) *
                       tick_seconds();
  }
  counters.cpu_stall_s = stall_seconds(root_ / "proc/pressure/cpu");
  counters.memory_stall_s = stall_seconds(root_ / "proc/pressure/memory");
  if (const auto line = first_line(root_ / "proc/loadavg")) counters.load_1m = std::stod(*line);
  std::ifstream meminfo(root_ / "proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.starts_with("MemAvailable:")) counters.memory_available_bytes = std::stoll(line.substr(13)) * 1024;
  }
  return counters;
}

nlohmann::json MachineWindow::finish(const nlohmann::json& telemetry, Clock::time_point now,
                                     const QuietLimits& limits) const {
  const auto end = read();
  const double window = std::chrono::duration<double>(now - opened_).count();
  const double capacity = std::max(window, 1e-9) * cpus_;
  const double other = std::max(0.0, (end.busy_s - start_.busy_s) - (end.own_s - start_.own_s));
  const double other_share = other / capacity;
  const double steal_share = (end.steal_s - start_.steal_s) / capacity;
  const auto stall_share = [&](const std::optional<double>& from, const std::optional<double>& to) {
    return from && to ? std::optional<double>((*to - *from) / std::max(window, 1e-9)) : std::nullopt;
  };
  const auto memory_pressure = stall_share(start_.memory_stall_s, end.memory_stall_s);
  std::optional<int64_t> memory_available;
  if (start_.memory_available_bytes && end.memory_available_bytes)
    memory_available = std::min(*start_.memory_available_bytes, *end.memory_available_bytes);

  std::set<std::string> governors;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root_ / "sys/devices/system/cpu", error)) {
    const auto name = entry.path().filename().string();
    if (name.size() > 3 && name.starts_with("cpu") && std::isdigit(static_cast<unsigned char>(name[3])))
      if (const auto governor = first_line(entry.path() / "cpufreq/scaling_governor")) governors.insert(*governor);
  }
  std::string governor;
  for (const auto& name : governors) governor += (governor.empty() ? "" : ",") + name;
  auto boost = flag(root_ / "sys/devices/system/cpu/cpufreq/boost");
  if (!boost) {
    if (const auto no_turbo = flag(root_ / "sys/devices/system/cpu/intel_pstate/no_turbo")) boost = !*no_turbo;
  }

  nlohmann::json reasons = nlohmann::json::array();
  const bool judged = window >= shortest_judged_window_s;
  const auto of_cpus = " of the " + std::to_string(cpus_) + " CPUs' time";
  if (judged && other_share > limits.other_cpu_share)
    reasons.push_back("other processes used " + percent(other_share) + of_cpus + " (limit " +
                      percent(limits.other_cpu_share) + ")");
  if (judged && steal_share > limits.steal_share)
    reasons.push_back("the hypervisor stole " + percent(steal_share) + of_cpus + " (limit " +
                      percent(limits.steal_share) + ")");
  if (judged && memory_pressure && *memory_pressure > limits.memory_pressure_share)
    reasons.push_back("tasks waited for memory " + percent(*memory_pressure) + " of the time (limit " +
                      percent(limits.memory_pressure_share) + ")");
  if (telemetry.value("status", "") == "ok") {
    for (const auto& gpu : telemetry.at("gpus")) {
      const auto others = gpu.value("other_processes", 0);
      if (others > 0)
        reasons.push_back("GPU " + gpu.at("index").dump() + " had " + std::to_string(others) + " other process" +
                          (others == 1 ? "" : "es"));
    }
  }
  return {{"window_seconds", window},
          {"cpus", cpus_},
          {"governor", governor.empty() ? nlohmann::json(nullptr) : nlohmann::json(governor)},
          {"boost", optional_json(boost)},
          {"smt", optional_json(flag(root_ / "sys/devices/system/cpu/smt/active"))},
          {"load_1m", optional_json(end.load_1m)},
          {"other_cpu_share", other_share},
          {"steal_share", steal_share},
          {"cpu_pressure_share", optional_json(stall_share(start_.cpu_stall_s, end.cpu_stall_s))},
          {"memory_pressure_share", optional_json(memory_pressure)},
          {"memory_available_bytes", optional_json(memory_available)},
          {"judged", judged},
          {"busy", !reasons.empty()},
          {"busy_reasons", reasons}};
}

}  // namespace ts::agent
