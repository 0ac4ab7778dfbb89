#pragma once
// Every LibTorch call whose spelling changed between the versions we build
// against (2.4 .. 2.6 and later) goes through here, so the rest of the worker
// is version-free.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

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

}  // namespace ts::worker::compat
