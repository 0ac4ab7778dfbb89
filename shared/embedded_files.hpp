#pragma once
// The files of schemas/ compiled into every binary (see cmake/EmbedFiles.cmake).
#include <map>
#include <string_view>

namespace ts::embedded {
// Keyed by the path relative to schemas/, e.g. "job.schema.json".
const std::map<std::string_view, std::string_view>& files();
}  // namespace ts::embedded
