#include "shared/json_io.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shared/errors.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::json_io {
namespace {

class JsonIo : public ::testing::Test {
 protected:
  testing::TempDirectory temp_{"ts_json_io"};
  const std::filesystem::path& directory_ = temp_.path();
};

TEST_F(JsonIo, WritesAtomicallyAndReadsBack) {
  const auto path = (directory_ / "doc.json").string();
  write_atomically(path, {{"a", 1}});
  write_atomically(path, {{"a", 2}});
  EXPECT_EQ(read(path), (nlohmann::json{{"a", 2}}));
  // Only the document remains: no temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory_), std::filesystem::directory_iterator{}), 1);
}

TEST_F(JsonIo, BadJsonNamesTheFile) {
  const auto path = (directory_ / "bad.json").string();
  std::ofstream(path) << "{\"a\": ";
  try {
    read(path);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos);
  }
}

TEST_F(JsonIo, MissingFileIsInvalidInput) { EXPECT_THROW(read((directory_ / "absent.json").string()), InvalidInput); }

}  // namespace
}  // namespace ts::json_io
