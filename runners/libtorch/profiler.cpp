#include "runners/libtorch/profiler.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <chrono>
#include <memory>
#include <set>

#include "runners/libtorch/compat.hpp"
#include "runners/libtorch/device.hpp"
#include "shared/digest.hpp"
#include "shared/gzip_file.hpp"
#include "shared/log.hpp"
#include "shared/profiles/summary.hpp"

namespace ts::worker {
namespace {

using profiles::ProfiledEvent;

namespace kineto = torch::autograd::profiler;
namespace observer = torch::profiler::impl;

constexpr const char* kTraceName = "profile.trace.json.gz";  // the torch-compile runner's name too
constexpr int64_t kWarmupSteps = 1;                          // under the profiler, not recorded

nlohmann::json options_json(const ProfileOptions& options) {
  return {{"steps", options.steps},
          {"record_shapes", options.record_shapes},
          {"memory", options.memory},
          {"with_stack", options.with_stack}};
}

// The profiler between enable and disable; disabled on the way out of an
// exception too, so that a failed step leaves no profiler running.
class ActiveProfiler {
 public:
  ActiveProfiler(const observer::ProfilerConfig& config, const std::set<observer::ActivityType>& activities) {
    kineto::prepareProfiler(config, activities);
    kineto::enableProfiler(config, activities);
  }
  ~ActiveProfiler() {
    if (active_) kineto::disableProfiler();
  }
  ActiveProfiler(const ActiveProfiler&) = delete;
  ActiveProfiler& operator=(const ActiveProfiler&) = delete;

  std::unique_ptr<kineto::ProfilerResult> stop() {
    active_ = false;
    return kineto::disableProfiler();
  }

 private:
  bool active_ = true;
};

// torch.profiler's str(input_shapes): "[[8, 32], [32], []]".
std::string shapes_text(const kineto::KinetoEvent& event) {
  std::string text = "[";
  if (event.hasShapes()) {
    const auto shapes = event.shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      text += i == 0 ? "[" : ", [";
      for (std::size_t d = 0; d < shapes[i].size(); ++d) text += (d == 0 ? "" : ", ") + std::to_string(shapes[i][d]);
      text += "]";
    }
  }
  return text + "]";
}

std::vector<ProfiledEvent> events_of(const kineto::ProfilerResult& result, bool with_shapes) {
  std::vector<ProfiledEvent> events;
  for (const auto& event : result.events()) {
    events.push_back({event.name(), event.deviceType() != c10::DeviceType::CPU,
                      event.isAsync() || event.startThreadId() != event.endThreadId(), event.startThreadId(),
                      event.startNs(), event.endNs(), event.correlationId(), event.linkedCorrelationId(),
                      with_shapes ? shapes_text(event) : std::string()});
  }
  return events;
}

// The trace as the profiler saves it, gzip-compressed, then renamed into
// place: {file, bytes, sha256}.
nlohmann::json write_trace(kineto::ProfilerResult& result, const std::filesystem::path& folder) {
  const auto plain = folder / "profile.trace.partial.json";
  const auto compressed = folder / "profile.trace.partial.json.gz";
  const auto path = folder / kTraceName;
  result.save(plain.string());
  gzip_file(plain, compressed);
  std::filesystem::remove(plain);
  std::filesystem::rename(compressed, path);
  return {{"file", kTraceName},
          {"bytes", static_cast<int64_t>(std::filesystem::file_size(path))},
          {"sha256", sha256_of_file(path)}};
}

}  // namespace

ProfileOptions profile_options(const nlohmann::json& profile) {
  return {profile.at("steps").get<int64_t>(), profile.at("activities").get<std::vector<std::string>>(),
          profile.at("record_shapes").get<bool>(), profile.at("memory").get<bool>(),
          profile.at("with_stack").get<bool>()};
}

nlohmann::json unavailable_profile(const ProfileOptions& options, const std::string& reason) {
  auto section = options_json(options);
  section.update(nlohmann::json{
      {"status", "unavailable"}, {"reason", reason}, {"profiler", nullptr}, {"activities", nlohmann::json::array()}});
  return section;
}

nlohmann::json profile_steps(const ProfileOptions& options, const torch::Device& device,
                             const std::function<void()>& step, const std::filesystem::path& folder,
                             bool write_trace_file) {
  std::vector<std::string> activities;
  std::set<observer::ActivityType> kinds;
  for (const auto& activity : options.activities) {
    if (activity == "cpu") {
      kinds.insert(observer::ActivityType::CPU);
    } else if (device.is_cuda()) {
      kinds.insert(observer::ActivityType::CUDA);
    } else {
      continue;
    }
    activities.push_back(activity);
  }
  if (activities.empty()) {
    return unavailable_profile(options, "activities [cuda] on device " + device.str() + ": nothing to record");
  }
  const observer::ProfilerConfig config(observer::ProfilerState::KINETO, options.record_shapes, options.memory,
                                        options.with_stack);
  auto section = options_json(options);
  section.update(nlohmann::json{{"status", "ok"},
                                {"profiler", "LibTorch profiler (C++ API) " + compat::torch_version()},
                                {"activities", activities}});
  synchronize(device);
  {
    // One step under the profiler before those it records: its start-up (Kineto's, CUPTI's) is no step's.
    ActiveProfiler warm_up(config, kinds);
    for (int64_t i = 0; i < kWarmupSteps; ++i) {
      step();
      synchronize(device);
    }
    warm_up.stop();
  }
  std::vector<double> step_seconds;
  ActiveProfiler profiler(config, kinds);
  for (int64_t i = 1; i <= options.steps; ++i) {
    const auto started = std::chrono::steady_clock::now();
    {
      RECORD_USER_SCOPE(std::string(profiles::kStepMark) + std::to_string(i));
      step();
      synchronize(device);
    }
    step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  const auto result = profiler.stop();
  section["step_seconds"] = step_seconds;
  if (write_trace_file) {
    try {
      section["trace"] = write_trace(*result, folder);
    } catch (const std::exception& error) {
      // A LibTorch built without Kineto saves no trace (USE_KINETO=0): the summary stands.
      section["reason"] = std::string("no trace was written: ") + error.what();
      log::warn("profile: no trace was written: {}", error.what());
    }
  }
  section.update(profiles::summarize_profile(events_of(*result, options.record_shapes), options.steps,
                                             options.record_shapes, kinds.count(observer::ActivityType::CUDA) > 0));
  return section;
}

}  // namespace ts::worker
