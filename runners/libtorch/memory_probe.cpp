#include "runners/libtorch/memory_probe.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "runners/libtorch/compat.hpp"
#include "runners/libtorch/device.hpp"

namespace ts::worker {

ResidentSize resident_size() {
  std::ifstream status("/proc/self/status");
  ResidentSize size;
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string name;
    int64_t kib = 0;
    fields >> name >> kib;
    if (name == "VmRSS:") size.current = kib * 1024;
    if (name == "VmHWM:") size.high_water = kib * 1024;
  }
  return size;
}

bool reset_resident_high_water() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";  // 5: reset the peak resident set size (proc(5))
  clear_refs.close();
  return static_cast<bool>(clear_refs);
}

MemoryProbe::MemoryProbe(torch::Device device) : device_(device) {
  if (!device_.is_cuda()) warmup_.baseline_rss_bytes = resident_size().current;
}

void MemoryProbe::begin_timed_phase() {
  synchronize(device_);
#ifdef TORCHSWEEP_WITH_CUDA
  if (device_.is_cuda()) {
    const auto peaks = compat::cuda_allocator_peaks(device_.index());
    warmup_.warmup_peak_allocated_bytes = peaks.allocated_bytes;
    warmup_.warmup_peak_reserved_bytes = peaks.reserved_bytes;
    compat::reset_cuda_allocator_peaks(device_.index());
    return;
  }
#endif
  warmup_.warmup_peak_rss_bytes = resident_size().high_water;
  warmup_.hwm_reset = reset_resident_high_water();
  rss_at_start_ = resident_size().current;
}

MemoryReport MemoryProbe::end() const {
  synchronize(device_);
  auto report = warmup_;
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
  const auto peak = resident_size().high_water;
  report.peak_rss_bytes = peak;
  report.rss_growth_bytes = std::max<int64_t>(0, peak - rss_at_start_);
  report.rss_footprint_bytes = std::max<int64_t>(0, peak - *report.baseline_rss_bytes);
  return report;
}

}  // namespace ts::worker
