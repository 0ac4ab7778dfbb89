#pragma once
// Files kept beside the store (docs/explain.md, "Traces"): STORE.artifacts/,
// each file named by the SHA-256 of its contents under a folder of its first
// two hex digits. The coordinator writes a file before the artifacts row
// that names it (schemas/store/0023_artifacts.sql), so a row never names a
// partial file; equal contents are one file.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ts::store {

class ArtifactFiles {
 public:
  explicit ArtifactFiles(std::filesystem::path directory) : directory_(std::move(directory)) {}
  // The folder beside the store at `store_path`; none for a store in memory.
  static std::optional<ArtifactFiles> beside(const std::string& store_path);

  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path path_of(const std::string& sha256) const;
  // Writes `contents` as `sha256` (atomically) unless a file of its size is
  // there already. The caller has checked the digest.
  void keep(const std::string& sha256, std::string_view contents) const;
  // Every complete file: its SHA-256 and when it was last written.
  std::map<std::string, std::filesystem::file_time_type> files() const;
  // Removes a file; its folder too once empty. Returns the bytes freed.
  std::uintmax_t remove(const std::string& sha256) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace ts::store
