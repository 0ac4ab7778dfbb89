#include "agent/worker/memory_probe.hpp"

#include <sys/resource.h>

#include "agent/worker/device.hpp"

#ifdef TORCHSWEEP_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

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
    c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index());
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
    using c10::CachingAllocator::StatType;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
    const auto aggregate = static_cast<std::size_t>(StatType::AGGREGATE);
    report.source = "cuda_allocator";
    report.peak_allocated_bytes = stats.allocated_bytes[aggregate].peak;
    report.peak_reserved_bytes = stats.reserved_bytes[aggregate].peak;
    return report;
  }
#endif
  report.source = "rss";
  report.peak_rss_bytes = peak_rss_bytes();
  report.rss_growth_bytes = *report.peak_rss_bytes - peak_rss_at_begin_;
  return report;
}

}  // namespace ts::worker
