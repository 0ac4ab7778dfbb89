#include "shared/user_cache.hpp"

#include <cstdlib>

namespace ts {

std::filesystem::path user_cache_directory() {
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) {
    return std::filesystem::path(cache) / "torchsweep";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "torchsweep";
  }
  return {};
}

}  // namespace ts
