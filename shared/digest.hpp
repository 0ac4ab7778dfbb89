#pragma once
// SHA-256 through OpenSSL, in lower-case hex: what names a stored trace
// (store/artifacts.hpp) and checks a file carried in a message
// (shared/wire/attachment.hpp) or written by a runner.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace ts {

// Lower-case hex of `size` bytes.
std::string hex(const unsigned char* bytes, std::size_t size);
// SHA-256 of `bytes`, lower-case hex.
std::string sha256_hex(std::string_view bytes);
// SHA-256 of the file at `path`, read in blocks; throws std::runtime_error
// naming the file when it cannot be read.
std::string sha256_of_file(const std::filesystem::path& path);

}  // namespace ts
