#include "agent/node/timed_window.hpp"

namespace ts::agent {

void TimedWindow::epoch_finished(Clock::time_point now, double seconds) {
  // The line is seen up to one poll after the epoch ended; its start is
  // estimated from the same moment, so the window shifts but keeps its length.
  if (!start_) start_ = now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  end_ = now;
}

std::optional<TimedWindow::Bounds> TimedWindow::bounds() const {
  if (!start_) return std::nullopt;
  return Bounds{*start_, *end_};
}

}  // namespace ts::agent
