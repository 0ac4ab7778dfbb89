#include "runners/libtorch/device.hpp"

#include <chrono>
#include <utility>

#ifdef TORCHSWEEP_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

namespace ts::worker {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

class HostStepClock final : public StepClock {
 public:
  void begin_epoch() override {
    times_ = {};
    epoch_start_ = Clock::now();
  }
  void begin_step() override { step_start_ = Clock::now(); }
  void end_step() override { times_.step_seconds.push_back(seconds_between(step_start_, Clock::now())); }
  EpochTimes end_epoch() override {
    times_.seconds = seconds_between(epoch_start_, Clock::now());
    return std::move(times_);
  }
  std::string name() const override { return "steady_clock"; }

 private:
  EpochTimes times_;
  Clock::time_point epoch_start_, step_start_;
};

class HostIntervalTimer final : public IntervalTimer {
 public:
  void begin() override { start_ = Clock::now(); }
  void end() override { seconds_.push_back(seconds_between(start_, Clock::now())); }
  std::vector<double> take() override { return std::exchange(seconds_, {}); }

 private:
  Clock::time_point start_;
  std::vector<double> seconds_;
};

#ifdef TORCHSWEEP_WITH_CUDA
using EventPair = std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>;

double event_seconds(EventPair& events) { return events.first.elapsed_time(events.second) / 1000.0; }

// Event pairs made and recorded once, up front (CUDA makes an event at its
// first record), and reused by every take(): none is created in a timed step.
std::vector<EventPair> recorded_event_pairs(std::size_t count) {
  std::vector<EventPair> events;
  for (std::size_t i = 0; i < count; ++i) {
    events.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
    events.back().first.record();
    events.back().second.record();
  }
  return events;
}

class CudaIntervalTimer final : public IntervalTimer {
 public:
  CudaIntervalTimer(torch::Device device, std::size_t intervals_per_take)
      : events_(recorded_event_pairs(intervals_per_take)) {
    synchronize(device);
  }
  void begin() override {
    if (next_ == events_.size()) {  // more intervals than announced: made here, as a last resort
      events_.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
    }
    events_[next_].first.record();
  }
  void end() override { events_[next_++].second.record(); }
  std::vector<double> take() override {
    std::vector<double> seconds;
    for (std::size_t i = 0; i < next_; ++i) seconds.push_back(event_seconds(events_[i]));
    next_ = 0;
    return seconds;
  }

 private:
  std::vector<EventPair> events_;
  std::size_t next_ = 0;
};

// Event pairs for every step of an epoch, made before the timed epochs and
// reused by each.
class CudaStepClock final : public StepClock {
 public:
  CudaStepClock(torch::Device device, int64_t steps_per_epoch)
      : device_(device), events_(recorded_event_pairs(static_cast<std::size_t>(steps_per_epoch))) {
    synchronize(device_);
  }
  void begin_epoch() override {
    synchronize(device_);
    next_ = 0;
    epoch_start_ = Clock::now();
  }
  void begin_step() override {
    if (next_ == events_.size()) {  // more steps than announced: made here, as a last resort
      events_.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
    }
    events_[next_].first.record();
  }
  void end_step() override { events_[next_++].second.record(); }
  EpochTimes end_epoch() override {
    synchronize(device_);
    EpochTimes times;
    times.seconds = seconds_between(epoch_start_, Clock::now());
    for (std::size_t i = 0; i < next_; ++i) times.step_seconds.push_back(event_seconds(events_[i]));
    return times;
  }
  std::string name() const override { return "cuda_events"; }

 private:
  torch::Device device_;
  std::vector<EventPair> events_;
  std::size_t next_ = 0;
  Clock::time_point epoch_start_;
};
#endif

}  // namespace

torch::Device resolve_device(const std::string& spec) {
  torch::Device device(spec);
  if (device.is_cpu()) return device;
#ifdef TORCHSWEEP_WITH_CUDA
  const auto count = static_cast<int64_t>(torch::cuda::device_count());
  if (count == 0) throw Unsupported("device " + spec + ": no CUDA device is visible on this node");
  if (!device.has_index()) device.set_index(0);
  if (device.index() >= count) {
    throw Unsupported("device " + spec + ": only " + std::to_string(count) + " CUDA device(s) visible");
  }
  c10::cuda::set_device(device.index());
  return device;
#else
  throw Unsupported("device " + spec + ": this torchsweep-worker was built against a CPU-only LibTorch");
#endif
}

std::string rank_device(const std::string& spec, int local_rank, int ranks) {
  if (ranks == 1 || !spec.starts_with("cuda")) return spec;
  return "cuda:" + std::to_string(local_rank);
}

void synchronize(const torch::Device& device) {
#ifdef TORCHSWEEP_WITH_CUDA
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
#else
  (void)device;
#endif
}

std::unique_ptr<StepClock> make_step_clock(const torch::Device& device, int64_t steps_per_epoch) {
#ifdef TORCHSWEEP_WITH_CUDA
  if (device.is_cuda()) return std::make_unique<CudaStepClock>(device, steps_per_epoch);
#endif
  (void)device;
  (void)steps_per_epoch;
  return std::make_unique<HostStepClock>();
}

std::unique_ptr<IntervalTimer> make_interval_timer(const torch::Device& device, std::size_t intervals_per_take) {
#ifdef TORCHSWEEP_WITH_CUDA
  if (device.is_cuda()) return std::make_unique<CudaIntervalTimer>(device, intervals_per_take);
#endif
  (void)device;
  (void)intervals_per_take;
  return std::make_unique<HostIntervalTimer>();
}

nlohmann::json gpu_context() {
  nlohmann::json context{{"cuda_version", nullptr},
                         {"cudnn_version", nullptr},
                         {"gpu_driver", nullptr},
                         {"gpu_count", 0},
                         {"gpus", nlohmann::json::array()}};
#ifdef TORCHSWEEP_WITH_CUDA
  const auto count = static_cast<int>(torch::cuda::device_count());
  context["gpu_count"] = count;
  if (count == 0) return context;
  auto version_text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  context["cuda_version"] = version_text(runtime);
  // The CUDA version the driver supports; the driver's own version is NVML's, which the agent adds as gpu_driver.
  context["cuda_driver_version"] = version_text(driver);
  if (at::detail::getCUDAHooks().hasCuDNN()) {
    context["cudnn_version"] = std::to_string(at::detail::getCUDAHooks().versionCuDNN());
  }
  for (int index = 0; index < count; ++index) {
    const auto* properties = at::cuda::getDeviceProperties(index);
    context["gpus"].push_back(
        {{"index", index},
         {"name", properties->name},
         {"memory_bytes", properties->totalGlobalMem},
         {"compute_capability", std::to_string(properties->major) + "." + std::to_string(properties->minor)},
         {"multiprocessors", properties->multiProcessorCount}});
  }
#endif
  return context;
}

}  // namespace ts::worker
