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

// "cpu", "cuda" or "cuda:N"; throws Unsupported when CUDA was not compiled
// in, no GPU is visible, or N is out of range. A CUDA device becomes this
// process's current device: a rank on cuda:1 then records its events and
// streams there and opens no context on GPU 0.
torch::Device resolve_device(const std::string& spec);

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

// `steps_per_epoch`: how many steps each epoch times, so that a CUDA clock
// makes its events before the timed epochs.
std::unique_ptr<StepClock> make_step_clock(const torch::Device& device, int64_t steps_per_epoch);

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
