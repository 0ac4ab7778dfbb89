#include "runners/libtorch/environment.hpp"

#include <sys/utsname.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runners/libtorch/compat.hpp"
#include "runners/libtorch/device.hpp"
#include "runners/libtorch/job.hpp"
#include "shared/host_name.hpp"
#include "shared/job_resolution.hpp"
#include "shared/version.hpp"

namespace ts::worker {
namespace {

// The value of the first line of `path` that starts with `key`, after the
// separator, trimmed of quotes and spaces.
std::string first_value(const char* path, std::string_view key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(key)) continue;
    auto value = line.substr(line.find(separator) + 1);
    const auto begin = value.find_first_not_of(" \t\"");
    const auto end = value.find_last_not_of(" \t\"");
    return begin == std::string::npos ? std::string() : value.substr(begin, end - begin + 1);
  }
  return "unknown";
}

// The BLAS library this process actually loaded (Debian picks it through
// the libblas.so.3 alternative), resolved to its real path.
std::string loaded_blas() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const auto path = line.substr(slash);
    const auto name = path.substr(path.rfind('/') + 1);
    if (name.starts_with("libblas") || name.starts_with("libopenblas") || name.starts_with("libmkl_rt") ||
        name.starts_with("libblis")) {
      std::error_code error;
      const auto real = std::filesystem::canonical(path, error);
      return error ? path : real.string();
    }
  }
  return "none loaded";
}

}  // namespace

nlohmann::json capture_context() {
  utsname system{};
  uname(&system);
  const auto pages = sysconf(_SC_PHYS_PAGES);
  const auto page_size = sysconf(_SC_PAGESIZE);
  nlohmann::json context{
      {"hostname", host_name()},
      {"os", first_value("/etc/os-release", "PRETTY_NAME=", '=')},
      {"kernel", std::string(system.sysname) + " " + system.release},
      {"machine", system.machine},
      {"cpu_model", first_value("/proc/cpuinfo", "model name", ':')},
      {"cpu_cores_available", job_resolution::cores_available()},
      {"memory_total_bytes", static_cast<int64_t>(pages) * page_size},
      {"torch_version", compat::torch_version()},
      {"mkldnn", at::hasMKLDNN()},
      {"blas_library", loaded_blas()},
      {"intra_op_threads", at::get_num_threads()},
      {"interop_threads", at::get_num_interop_threads()},
      {"torchsweep_version", std::string(version::number())},
      {"torchsweep_commit", std::string(version::commit())},
  };
  context.update(gpu_context());
  return context;
}

}  // namespace ts::worker
