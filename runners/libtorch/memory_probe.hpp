#pragma once
// Memory in phases (docs/methodology.md): created before the job's model is
// built, it notes the process's baseline; begin_timed_phase(), right after
// warm-up, reads the warm-up/compile phase's peaks and resets the counters
// (the CUDA caching allocator's peaks; on CPU the resident high-water mark,
// through /proc/self/clear_refs); end() reads the timed phase's peaks.
#include <torch/torch.h>

#include "runners/libtorch/result.hpp"

namespace ts::worker {

class MemoryProbe {
 public:
  explicit MemoryProbe(torch::Device device);
  void begin_timed_phase();
  MemoryReport end() const;

 private:
  torch::Device device_;
  MemoryReport warmup_;  // the warm-up/compile phase's figures and the baseline
  int64_t rss_at_start_ = 0;
};

// From /proc/self/status: the resident set size and its high-water mark, in bytes.
struct ResidentSize {
  int64_t current = 0, high_water = 0;
};
ResidentSize resident_size();
// Resets the high-water mark to the current resident size; false where the
// kernel does not allow it (the mark then spans the whole process life).
bool reset_resident_high_water();

}  // namespace ts::worker
