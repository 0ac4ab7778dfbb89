#pragma once
// The files of readers/report/ and Vega's browser bundle, compiled into the
// readers (see readers/CMakeLists.txt), keyed by file name.
#include <map>
#include <string_view>

namespace ts::embedded {
const std::map<std::string_view, std::string_view>& report_assets();
}  // namespace ts::embedded
