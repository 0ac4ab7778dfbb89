#pragma once
// Peak memory over the timed phase: the CUDA caching allocator's peak
// allocated and reserved bytes (reset at begin), or on CPU the process's peak
// RSS and how much it grew during the phase.
#include <torch/torch.h>

#include "agent/worker/result.hpp"

namespace ts::worker {

class MemoryProbe {
 public:
  explicit MemoryProbe(torch::Device device) : device_(device) {}
  void begin();
  MemoryReport end() const;

 private:
  torch::Device device_;
  int64_t peak_rss_at_begin_ = 0;
};

// getrusage(RUSAGE_SELF).ru_maxrss in bytes.
int64_t peak_rss_bytes();

}  // namespace ts::worker
