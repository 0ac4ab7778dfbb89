#pragma once
// gzip files through zlib: a profile's trace is kept compressed from the
// runner that writes it to the store that keeps it (docs/explain.md).
#include <cstdint>
#include <filesystem>
#include <string>

namespace ts {

// Compresses the file `from` into `to` (overwritten). Throws
// std::runtime_error naming the file that could not be read or written.
void gzip_file(const std::filesystem::path& from, const std::filesystem::path& to);

// The uncompressed contents of the gzip file `path`; throws
// std::runtime_error when it cannot be read, is not gzip, or would exceed
// `max_bytes` uncompressed.
std::string read_gzip_file(const std::filesystem::path& path, std::uint64_t max_bytes);

}  // namespace ts
