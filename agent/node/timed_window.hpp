#pragma once
// When a job's timed epochs ran, as the agent sees it from the runner's
// progress lines (one per timed epoch, with its length): the window the GPU
// telemetry and the energy counters are read over. The same for every
// runner: none reports clock times, only epoch lengths.
#include <chrono>
#include <optional>
#include <utility>

namespace ts::agent {

class TimedWindow {
 public:
  using Clock = std::chrono::steady_clock;
  using Bounds = std::pair<Clock::time_point, Clock::time_point>;

  // A runner's progress line: a timed epoch of `seconds` ended about `now`.
  void epoch_finished(Clock::time_point now, double seconds);
  // From the first timed epoch's start to the last one's end; none before one ended.
  std::optional<Bounds> bounds() const;

 private:
  std::optional<Clock::time_point> start_, end_;
};

}  // namespace ts::agent
