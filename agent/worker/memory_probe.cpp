#include "agent/worker/memory_probe.hpp"

#include <sys/resource.h>

#include "agent/worker/compat.hpp"
#include "agent/worker/device.hpp"

namespace ts::worker {

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void MemoryProbe::begin() {
  synchronize(device_);
#ifdef TORCHSWEEP_WITH_CUDA
  if (device_.is_cuda()) {
    compat::reset_cuda_allocator_peaks(device_.index());
    return;
  }
#endif
  peak_rss_at_begin_ = peak_rss_bytes();
}

MemoryReport MemoryProbe::end() const {
  synchronize(device_);
  MemoryReport report;
#ifdef TORCHSWEEP_WITH_CUDA
  if (device_.is_cuda()) {
    const auto peaks = compat::cuda_allocator_peaks(device_.index());
    report.source = "cuda_allocator";
    report.peak_allocated_bytes = peaks.allocated_bytes;
    report.peak_reserved_bytes = peaks.reserved_bytes;
    return report;
  }
#endif
  report.source = "rss";
  report.peak_rss_bytes = peak_rss_bytes();
  report.rss_growth_bytes = *report.peak_rss_bytes - peak_rss_at_begin_;
  return report;
}

}  // namespace ts::worker
