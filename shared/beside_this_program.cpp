#include "shared/beside_this_program.hpp"

namespace ts {

std::filesystem::path beside_this_program(std::string_view file) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return self.parent_path() / file;
}

}  // namespace ts
