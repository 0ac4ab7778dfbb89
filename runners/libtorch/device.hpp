#pragma once
// Device selection, synchronisation and clocks. CUDA code is compiled in only
// when the LibTorch found was built with CUDA (TORCHSWEEP_WITH_CUDA).
#include <torch/torch.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::worker {

// The job is valid but this machine or build cannot run it (status
// "unsupported" in the result).
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The CUDA runtime as device selection sees it: how many devices this
// process sees and which is current. An interface so that a CPU test can
// stand in for a node of several GPUs (tests/runners/libtorch/device_test.cpp).
class CudaDevices {
 public:
  virtual ~CudaDevices() = default;
  virtual int count() const = 0;
  virtual void make_current(int index) = 0;
  // Why there is none, for a count of 0.
  virtual std::string why_none() const = 0;
};

// This process's CUDA runtime (none in a worker built against a CPU-only LibTorch).
std::unique_ptr<CudaDevices> cuda_devices();

// "cpu", "cuda" or "cuda:N"; throws Unsupported when CUDA was not compiled
// in, no GPU is visible, or N is out of range. A CUDA device becomes this
// process's current device: a rank on cuda:1 then records its events and
// streams there and opens no context on GPU 0.
torch::Device resolve_device(const std::string& spec, CudaDevices& devices);

// The device a rank of a data-parallel job runs on: with several ranks,
// local rank i takes the i-th GPU the agent made visible; a one-rank job
// (data_parallel: always) keeps the job's own, index included.
std::string rank_device(const std::string& spec, int local_rank, int ranks);

// Waits for all queued work on `device` (a no-op on CPU).
void synchronize(const torch::Device& device);

struct EpochTimes {
  double seconds = 0;
  std::vector<double> step_seconds;
};

// Times steps within an epoch. CPU: steady_clock around each step. CUDA: an
// event pair per step (no synchronisation between steps) and a device
// synchronisation before each clock read at the epoch's ends.
class StepClock {
 public:
  virtual ~StepClock() = default;
  virtual void begin_epoch() = 0;
  virtual void begin_step() = 0;
  virtual void end_step() = 0;
  virtual EpochTimes end_epoch() = 0;
  virtual std::string name() const = 0;
};

// Begin and end marks on a device's timeline (on CUDA an event pair on the
// current stream), read after a synchronisation.
class TimelineMarks {
 public:
  virtual ~TimelineMarks() = default;
  virtual void begin() = 0;
  virtual void end() = 0;
  virtual double seconds() = 0;
};

// What the device clocks need of a device: marks and a synchronisation. An
// interface so that a CPU test can count the marks a clock makes
// (tests/runners/libtorch/device_test.cpp).
class DeviceTimeline {
 public:
  virtual ~DeviceTimeline() = default;
  // Made and recorded once, so that a later record makes nothing.
  virtual std::unique_ptr<TimelineMarks> make_marks() = 0;
  virtual void synchronize() = 0;
  virtual std::string clock_name() const = 0;
};

// `steps_per_epoch`: how many steps each epoch times, so that a CUDA clock
// makes its events before the timed epochs.
std::unique_ptr<StepClock> make_step_clock(const torch::Device& device, int64_t steps_per_epoch);
std::unique_ptr<StepClock> make_step_clock(std::shared_ptr<DeviceTimeline> timeline, int64_t steps_per_epoch);

// Durations of marked intervals on the device's timeline: the host clock on
// CPU, an event pair on the current stream on CUDA (no synchronisation).
class IntervalTimer {
 public:
  virtual ~IntervalTimer() = default;
  virtual void begin() = 0;
  virtual void end() = 0;
  // The intervals ended since the last call; on CUDA the device must have
  // been synchronised since.
  virtual std::vector<double> take() = 0;
};

// `intervals_per_take`: how many intervals end between two take()s, so that
// a CUDA timer makes its events before the timed epochs.
std::unique_ptr<IntervalTimer> make_interval_timer(const torch::Device& device, std::size_t intervals_per_take);
std::unique_ptr<IntervalTimer> make_interval_timer(std::shared_ptr<DeviceTimeline> timeline,
                                                   std::size_t intervals_per_take);

// Wall time of `work`, with the device synchronised before and after.
template <class Work>
double synchronized_seconds(const torch::Device& device, Work&& work) {
  synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  work();
  synchronize(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// cuda_version, cudnn_version, gpu_driver, gpu_count and gpus[] for the
// result context; nulls and zero without CUDA.
nlohmann::json gpu_context();

}  // namespace ts::worker
