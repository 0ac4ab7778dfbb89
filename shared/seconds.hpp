#pragma once
// Durations cross every boundary (options, protocol messages, job
// documents) as seconds in a double; inside they are std::chrono.
#include <chrono>
#include <cstdint>

namespace ts {

inline std::chrono::milliseconds milliseconds_from_seconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

inline double seconds_of(std::chrono::milliseconds duration) { return std::chrono::duration<double>(duration).count(); }

}  // namespace ts
