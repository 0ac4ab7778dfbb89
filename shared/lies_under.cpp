#include "shared/lies_under.hpp"

namespace ts {

bool lies_under(const std::filesystem::path& path, const std::filesystem::path& root) {
  const auto relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace ts
