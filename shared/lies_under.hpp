#pragma once
// Whether a path names something inside a directory: the check every place
// that reads a file a job names makes (the agent's --data-root and
// --model-path, the worker's model_root). Both paths are compared as given;
// callers resolve links and ".." first (std::filesystem::weakly_canonical).
#include <filesystem>

namespace ts {

bool lies_under(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace ts
