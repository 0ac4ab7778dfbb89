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

#ifdef TORCHSWEEP_WITH_CUDA
class RuntimeCudaDevices final : public CudaDevices {
 public:
  int count() const override { return static_cast<int>(torch::cuda::device_count()); }
  void make_current(int index) override { c10::cuda::set_device(static_cast<c10::DeviceIndex>(index)); }
  std::string why_none() const override { return "no CUDA device is visible on this node"; }
};
#else
class NoCudaDevices final : public CudaDevices {
 public:
  int count() const override { return 0; }
  void make_current(int) override {}
  std::string why_none() const override { return "this torchsweep-worker was built against a CPU-only LibTorch"; }
};
#endif

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

// Clocks on a device's timeline. Their marks are made and recorded once,
// up front (CUDA makes an event at its first record), and reused: none is
// made in a timed step, unless more are used than were announced.
std::vector<std::unique_ptr<TimelineMarks>> made_marks(DeviceTimeline& timeline, std::size_t count) {
  std::vector<std::unique_ptr<TimelineMarks>> marks;
  for (std::size_t i = 0; i < count; ++i) marks.push_back(timeline.make_marks());
  return marks;
}

class TimelineIntervalTimer final : public IntervalTimer {
 public:
  TimelineIntervalTimer(std::shared_ptr<DeviceTimeline> timeline, std::size_t intervals_per_take)
      : timeline_(std::move(timeline)), marks_(made_marks(*timeline_, intervals_per_take)) {
    timeline_->synchronize();
  }
  void begin() override {
    if (next_ == marks_.size()) marks_.push_back(timeline_->make_marks());  // a last resort
    marks_[next_]->begin();
  }
  void end() override { marks_[next_++]->end(); }
  std::vector<double> take() override {
    std::vector<double> seconds;
    for (std::size_t i = 0; i < next_; ++i) seconds.push_back(marks_[i]->seconds());
    next_ = 0;
    return seconds;
  }

 private:
  std::shared_ptr<DeviceTimeline> timeline_;
  std::vector<std::unique_ptr<TimelineMarks>> marks_;
  std::size_t next_ = 0;
};

// A pair of marks per step of an epoch (an interval timer's), and a device
// synchronisation before each host clock read at the epoch's ends.
class TimelineStepClock final : public StepClock {
 public:
  TimelineStepClock(std::shared_ptr<DeviceTimeline> timeline, int64_t steps_per_epoch)
      : timeline_(timeline), steps_(std::move(timeline), static_cast<std::size_t>(steps_per_epoch)) {}
  void begin_epoch() override {
    timeline_->synchronize();
    steps_.take();  // an epoch that never ended leaves nothing behind
    epoch_start_ = Clock::now();
  }
  void begin_step() override { steps_.begin(); }
  void end_step() override { steps_.end(); }
  EpochTimes end_epoch() override {
    timeline_->synchronize();
    return {seconds_between(epoch_start_, Clock::now()), steps_.take()};
  }
  std::string name() const override { return timeline_->clock_name(); }

 private:
  std::shared_ptr<DeviceTimeline> timeline_;
  TimelineIntervalTimer steps_;
  Clock::time_point epoch_start_;
};

#ifdef TORCHSWEEP_WITH_CUDA
class CudaEventMarks final : public TimelineMarks {
 public:
  CudaEventMarks() {
    begin_.record();
    end_.record();
  }
  void begin() override { begin_.record(); }
  void end() override { end_.record(); }
  double seconds() override { return begin_.elapsed_time(end_) / 1000.0; }

 private:
  at::cuda::CUDAEvent begin_{cudaEventDefault}, end_{cudaEventDefault};
};

// Events on the current stream of the device the process made current.
class CudaTimeline final : public DeviceTimeline {
 public:
  explicit CudaTimeline(torch::Device device) : device_(device) {}
  std::unique_ptr<TimelineMarks> make_marks() override { return std::make_unique<CudaEventMarks>(); }
  void synchronize() override { ts::worker::synchronize(device_); }
  std::string clock_name() const override { return "cuda_events"; }

 private:
  torch::Device device_;
};
#endif
}  // namespace

std::unique_ptr<CudaDevices> cuda_devices() {
#ifdef TORCHSWEEP_WITH_CUDA
  return std::make_unique<RuntimeCudaDevices>();
#else
  return std::make_unique<NoCudaDevices>();
#endif
}

torch::Device resolve_device(const std::string& spec, CudaDevices& devices) {
  torch::Device device(spec);
  if (device.is_cpu()) return device;
  const int count = devices.count();
  if (count == 0) throw Unsupported("device " + spec + ": " + devices.why_none());
  if (!device.has_index()) device.set_index(0);
  if (device.index() >= count) {
    throw Unsupported("device " + spec + ": only " + std::to_string(count) + " CUDA device(s) visible");
  }
  devices.make_current(device.index());
  return device;
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
  if (device.is_cuda()) return make_step_clock(std::make_shared<CudaTimeline>(device), steps_per_epoch);
#endif
  (void)device;
  (void)steps_per_epoch;
  return std::make_unique<HostStepClock>();
}

std::unique_ptr<StepClock> make_step_clock(std::shared_ptr<DeviceTimeline> timeline, int64_t steps_per_epoch) {
  return std::make_unique<TimelineStepClock>(std::move(timeline), steps_per_epoch);
}

std::unique_ptr<IntervalTimer> make_interval_timer(const torch::Device& device, std::size_t intervals_per_take) {
#ifdef TORCHSWEEP_WITH_CUDA
  if (device.is_cuda()) return make_interval_timer(std::make_shared<CudaTimeline>(device), intervals_per_take);
#endif
  (void)device;
  (void)intervals_per_take;
  return std::make_unique<HostIntervalTimer>();
}

std::unique_ptr<IntervalTimer> make_interval_timer(std::shared_ptr<DeviceTimeline> timeline,
                                                   std::size_t intervals_per_take) {
  return std::make_unique<TimelineIntervalTimer>(std::move(timeline), intervals_per_take);
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
