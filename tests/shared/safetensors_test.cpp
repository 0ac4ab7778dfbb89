#include "shared/tensors/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "shared/errors.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::safetensors {
namespace {

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// What safetensors.numpy.save({"b": int64 [[1, 2, 3]], "a": float32 [1.5, -2]},
// metadata={"k": "v"}) wrote (safetensors 0.4.5).
std::string reference_file() {
  const std::string header = R"({"__metadata__":{"k":"v"},"b":{"dtype":"I64","shape":[1,3],"data_offsets":[0,24]},)"
                             R"("a":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}}       )";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  return bytes + header + bytes_of<int64_t>({1, 2, 3}) + bytes_of<float>({1.5f, -2.0f});
}

File example() {
  File file;
  file.metadata = {{"k", "v"}};
  file.tensors["b"] = {"I64", {1, 3}, bytes_of<int64_t>({1, 2, 3})};
  file.tensors["a"] = {"F32", {2}, bytes_of<float>({1.5f, -2.0f})};
  return file;
}

void expect_equal(const File& got, const File& want) {
  EXPECT_EQ(got.metadata, want.metadata);
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (const auto& [name, tensor] : want.tensors) {
    const auto& other = got.tensors.at(name);
    EXPECT_EQ(other.dtype, tensor.dtype) << name;
    EXPECT_EQ(other.shape, tensor.shape) << name;
    EXPECT_EQ(other.bytes, tensor.bytes) << name;
  }
}

TEST(Safetensors, ReadsWhatTheReferenceImplementationWrote) {
  expect_equal(decode(reference_file(), "reference"), example());
}

TEST(Safetensors, WritesTheReferenceLayoutAndReadsItBackFromAFile) {
  const auto encoded = encode(example());
  ASSERT_EQ(encoded.size() % 8, 0u);
  const auto data = encoded.substr(encoded.size() - 32);
  EXPECT_EQ(data, bytes_of<int64_t>({1, 2, 3}) + bytes_of<float>({1.5f, -2.0f}));  // wider elements first
  testing::TempDirectory directory("ts_safetensors");
  const auto path = (directory.path() / "state.safetensors").string();
  write(path, example());
  expect_equal(read(path), example());
}

TEST(Safetensors, RefusesWhatBreaksTheFormatNamingTheTensor) {
  auto refusal = [](const std::string& bytes) {
    try {
      decode(bytes, "f.safetensors");
    } catch (const InvalidInput& error) {
      return std::string(error.what());
    }
    return std::string("<accepted>");
  };
  const auto good = reference_file();
  EXPECT_NE(refusal(good.substr(0, 5)).find("shorter"), std::string::npos);
  EXPECT_NE(refusal(good.substr(0, good.size() - 1)).find("a: data_offsets"), std::string::npos);  // past the end
  auto overlapping = good;
  overlapping.replace(overlapping.find("[24,32]"), 7, "[16,24]");
  EXPECT_NE(refusal(overlapping).find("overlap"), std::string::npos) << refusal(overlapping);
  auto wrong_size = good;
  wrong_size.replace(wrong_size.find("[1,3]"), 5, "[1,2]");
  EXPECT_NE(refusal(wrong_size).find("b: has 24 bytes"), std::string::npos) << refusal(wrong_size);
  auto dtype = good;
  dtype.replace(dtype.find("F32"), 3, "F31");
  EXPECT_NE(refusal(dtype).find("a: unknown safetensors dtype 'F31'"), std::string::npos) << refusal(dtype);
  EXPECT_NE(refusal(std::string(8, '\xff')).find("header length"), std::string::npos);
  File mismatched;
  mismatched.tensors["x"] = {"F32", {3}, "1234"};
  EXPECT_THROW(encode(mismatched), InvalidInput);
}

}  // namespace
}  // namespace ts::safetensors
