#include "agent/data_roots.hpp"

#include "shared/errors.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

bool lies_under(const fs::path& path, const fs::path& root) {
  const auto relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

std::string listed(const std::vector<fs::path>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : ", ") + root.string();
  return text;
}

}  // namespace

fs::path resolve_data_folder(const std::string& folder, const std::vector<fs::path>& roots) {
  if (roots.empty()) {
    throw InvalidInput("data.folder",
                       "'" + folder + "': this agent reads no data folders (start it with --data-root DIR)");
  }
  const fs::path given(folder);
  std::error_code error;
  for (const auto& root : roots) {
    const auto canonical_root = fs::weakly_canonical(root, error);
    if (error) continue;
    const auto candidate = fs::weakly_canonical(given.is_absolute() ? given : root / given, error);
    if (error || !lies_under(candidate, canonical_root)) continue;
    if (fs::is_directory(candidate, error)) return candidate;
  }
  throw InvalidInput("data.folder",
                     "'" + folder + "' is not a directory under the agent's data roots (" + listed(roots) + ")");
}

nlohmann::json with_data_path(nlohmann::json job, const std::vector<fs::path>& roots) {
  const auto data = job.find("data");
  if (data == job.end() || !data->is_object()) return job;
  (*data)["path"] = resolve_data_folder(data->at("folder").get<std::string>(), roots).string();
  return job;
}

}  // namespace ts::agent
