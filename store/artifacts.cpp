#include "store/artifacts.hpp"

#include "shared/json_io.hpp"

namespace ts::store {

std::optional<ArtifactFiles> ArtifactFiles::beside(const std::string& store_path) {
  if (store_path.empty() || store_path == ":memory:" || store_path.starts_with("file::memory:")) return std::nullopt;
  return ArtifactFiles(std::filesystem::path(store_path + ".artifacts"));
}

std::filesystem::path ArtifactFiles::path_of(const std::string& sha256) const {
  return directory_ / sha256.substr(0, 2) / sha256;
}

void ArtifactFiles::keep(const std::string& sha256, std::string_view contents) const {
  const auto path = path_of(sha256);
  std::error_code error;
  if (std::filesystem::file_size(path, error) == contents.size() && !error) return;
  std::filesystem::create_directories(path.parent_path());
  json_io::write_bytes_atomically(path.string(), contents);
}

std::map<std::string, std::filesystem::file_time_type> ArtifactFiles::files() const {
  std::map<std::string, std::filesystem::file_time_type> found;
  std::error_code error;
  for (const auto& folder : std::filesystem::directory_iterator(directory_, error)) {
    if (!folder.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(folder.path())) {
      const auto name = file.path().filename().string();
      // A write in flight is NAME.tmp.PID until its rename: not a file yet.
      if (file.is_regular_file() && name.size() == 64 && name.starts_with(folder.path().filename().string())) {
        found.emplace(name, file.last_write_time());
      }
    }
  }
  return found;
}

std::uintmax_t ArtifactFiles::remove(const std::string& sha256) const {
  const auto path = path_of(sha256);
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  if (error || !std::filesystem::remove(path, error)) return 0;
  if (std::filesystem::is_empty(path.parent_path(), error)) std::filesystem::remove(path.parent_path(), error);
  return bytes;
}

}  // namespace ts::store
