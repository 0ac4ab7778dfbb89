#include "shared/gzip_file.hpp"

#include <zlib.h>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ts {
namespace {

using GzipFile = std::unique_ptr<std::remove_pointer_t<gzFile>, decltype(&gzclose)>;

GzipFile open_gzip(const std::filesystem::path& path, const char* mode) {
  GzipFile file(gzopen(path.c_str(), mode), &gzclose);
  if (!file) throw std::runtime_error("cannot open " + path.string());
  return file;
}

}  // namespace

void gzip_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + from.string());
  auto out = open_gzip(to, "wb");
  std::vector<char> block(1 << 20);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    const auto size = static_cast<int>(in.gcount());
    if (gzwrite(out.get(), block.data(), static_cast<unsigned>(size)) != size) {
      throw std::runtime_error("cannot write " + to.string());
    }
  }
  if (in.bad()) throw std::runtime_error("cannot read " + from.string());
  if (gzclose(out.release()) != Z_OK) throw std::runtime_error("cannot write " + to.string());
}

std::string read_gzip_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = open_gzip(path, "rb");
  std::string text;
  std::vector<char> block(1 << 20);
  int read = 0;
  while ((read = gzread(file.get(), block.data(), static_cast<unsigned>(block.size()))) > 0) {
    if (text.size() + static_cast<std::size_t>(read) > max_bytes) {
      throw std::runtime_error(path.string() + " is over " + std::to_string(max_bytes) + " bytes uncompressed");
    }
    text.append(block.data(), static_cast<std::size_t>(read));
  }
  if (read < 0) throw std::runtime_error(path.string() + " is not a readable gzip file");
  return text;
}

}  // namespace ts
