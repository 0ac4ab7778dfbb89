#include "shared/host_name.hpp"

#include <unistd.h>

#include <array>

namespace ts {

std::string host_name() {
  std::array<char, 256> name{};  // HOST_NAME_MAX is 64 on Linux; room for a terminating zero either way
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "unknown";
  return name.data();
}

}  // namespace ts
