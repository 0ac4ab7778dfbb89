#pragma once
#include <string_view>

namespace ts::version {
std::string_view number();  // the project version, e.g. "0.1.0"
std::string_view commit();  // the git commit built from, "-dirty" when modified, or "unknown"
}  // namespace ts::version
