#include "shared/digest.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_directory.hpp"

namespace ts {
namespace {

TEST(Digest, Sha256IsTheStandardDigest) {
  // FIPS 180-2's example.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Digest, AFileHashesAsItsBytesDoAcrossBlocks) {
  const testing::TempDirectory directory("digest");
  std::string contents;
  for (int i = 0; i < 200'000; ++i) contents += static_cast<char>(i * 13 % 256);  // over three 64 KiB blocks
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{65'536}, contents.size()}) {
    const auto file = directory.path() / ("f" + std::to_string(size));
    std::ofstream(file, std::ios::binary) << contents.substr(0, size);
    EXPECT_EQ(sha256_of_file(file), sha256_hex(contents.substr(0, size))) << size;
  }
  EXPECT_THROW(sha256_of_file(directory.path() / "absent"), std::runtime_error);
}

}  // namespace
}  // namespace ts
