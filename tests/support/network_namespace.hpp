#pragma once
// What the tests on network namespaces share (partitions, several hosts):
// the ip binary, and which network namespace a process is in.
#include <filesystem>
#include <string>

namespace ts::testing {

inline std::string ip_binary() {
  for (const char* path : {"/usr/sbin/ip", "/usr/bin/ip", "/sbin/ip", "/bin/ip"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "ip";
}

// The namespace's identity ("net:[4026531840]"), or empty once the process is gone.
inline std::string network_namespace(const std::string& pid) {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/" + pid + "/ns/net", error).string();
}

}  // namespace ts::testing
