#include "agent/trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "shared/gzip_file.hpp"
#include "shared/log.hpp"

namespace ts::agent {
namespace {

constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{1} << 30;  // uncompressed: a 10 MiB gzip holds ~100-300 MiB

uint64_t nanoseconds(const nlohmann::json& microseconds) {
  return static_cast<uint64_t>(std::llround(std::max(0.0, microseconds.get<double>()) * 1000.0));
}

}  // namespace

std::filesystem::path trace_file(const nlohmann::json& trace, const std::filesystem::path& directory) {
  // A name in the job's directory, never a path out of it.
  const auto name = trace.at("file").get<std::string>();
  if (name.find('/') != std::string::npos || name == "." || name == "..") {
    throw std::runtime_error("its file '" + name + "' is not a name in the job's directory");
  }
  return directory / name;
}

std::vector<profiles::ProfiledEvent> trace_events(const nlohmann::json& trace) {
  const auto& events = trace.is_array() ? trace : trace.at("traceEvents");
  std::map<int64_t, std::string> processes;
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  for (const auto& event : events) {
    if (event.value("ph", "") != "M") continue;
    const auto name = event.value("name", "");
    const auto label = event.contains("args") ? event.at("args").value("name", "") : "";
    if (name == "process_name") processes[event.value("pid", int64_t{0})] = label;
    if (name == "thread_name") threads[{event.value("pid", int64_t{0}), event.value("tid", int64_t{0})}] = label;
  }
  std::vector<profiles::ProfiledEvent> out;
  // Only what ran within the profiled steps (the profiler's start and stop are no step's).
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  for (const auto& event : events) {
    if (event.value("ph", "") != "X" || !event.contains("ts")) continue;
    const auto pid = event.value("pid", int64_t{0}), tid = event.value("tid", int64_t{0});
    const auto start = nanoseconds(event.at("ts"));
    const auto end = start + nanoseconds(event.value("dur", nlohmann::json(0.0)));
    auto name = event.value("name", "");
    if (name.starts_with(profiles::kStepMark)) {
      first = std::min(first, start);
      last = std::max(last, end);
    }
    const bool on_device = processes[pid].rfind("/device:", 0) == 0;
    if (on_device && threads[{pid, tid}].rfind("Stream", 0) != 0) continue;  // XLA's derived lines (XLA Ops, Steps)
    out.push_back({std::move(name), on_device, false, (static_cast<uint64_t>(pid) << 32) ^ static_cast<uint64_t>(tid),
                   start, end, 0, 0, ""});
  }
  if (last > 0) {
    std::erase_if(out,
                  [&](const profiles::ProfiledEvent& event) { return event.start_ns < first || event.end_ns > last; });
  }
  return out;
}

void summarize_trace(nlohmann::json& result, const std::filesystem::path& directory) {
  if (!result.contains("profile")) return;
  auto& profile = result.at("profile");
  if (profile.value("status", "") != "ok" || !profile.contains("trace") || profile.contains("operators")) return;
  try {
    const auto trace =
        nlohmann::json::parse(read_gzip_file(trace_file(profile.at("trace"), directory), kMaxTraceBytes));
    const auto activities = profile.at("activities");
    const bool kernels = std::find(activities.begin(), activities.end(), "cuda") != activities.end();
    profile.update(
        profiles::summarize_profile(trace_events(trace), profile.at("steps").get<int64_t>(), false, kernels));
  } catch (const std::exception& error) {
    result["warnings"].push_back(std::string("profile: no operator summary: the trace could not be read: ") +
                                 error.what());
    log::warn("profile of job {}: no summary from its trace: {}", result.at("job").value("job_id", ""), error.what());
  }
}

}  // namespace ts::agent
