#pragma once
// Every LibTorch call whose spelling changed between the versions we build
// against (2.4 .. 2.6 and later) goes through here, so the rest of the worker
// is version-free.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#ifdef TORCHSWEEP_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#define TORCHSWEEP_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace torch::jit {
// Exported by libtorch_cpu but declared in a header that is not installed
// (torch/csrc/jit/codegen/fuser/interface.h): NNC stays off on CPU without it.
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace ts::worker::compat {

inline bool autocast_enabled(c10::DeviceType device) { return at::autocast::is_autocast_enabled(device); }
inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_enabled(device, enabled);
}
inline at::ScalarType autocast_dtype(c10::DeviceType device) { return at::autocast::get_autocast_dtype(device); }
inline void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
}

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

#ifdef TORCHSWEEP_WITH_CUDA
struct AllocatorPeaks {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};

inline void reset_cuda_allocator_peaks(c10::DeviceIndex device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
}

// The caching allocator's peak allocated and reserved bytes since the last
// reset. StatType moved to c10::CachingDeviceAllocator in 2.5.
inline AllocatorPeaks cuda_allocator_peaks(c10::DeviceIndex device) {
#if TORCHSWEEP_TORCH_AT_LEAST(2, 5)
  using c10::CachingDeviceAllocator::StatType;
#else
  using c10::cuda::CUDACachingAllocator::StatType;
#endif
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  const auto aggregate = static_cast<std::size_t>(StatType::AGGREGATE);
  return {stats.allocated_bytes[aggregate].peak, stats.reserved_bytes[aggregate].peak};
}
#endif

}  // namespace ts::worker::compat
