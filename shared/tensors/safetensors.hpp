#pragma once
// The safetensors format (huggingface/safetensors), the one file every runner
// reads its initial weights and reference batch from (docs/frameworks.md):
// an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the raw little-endian bytes. Python
// runners read it with the safetensors package; this is the C++ side, which
// has no library for it in Debian. No LibTorch here: the worker converts.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts::safetensors {

struct Tensor {
  std::string dtype;  // "F32", "I64", ... (the format's names)
  std::vector<int64_t> shape;
  std::string bytes;  // row-major, little-endian; element_size(dtype) * elements
};

struct File {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // the header's "__metadata__"
};

// Bytes of one element of `dtype`; throws ts::InvalidInput for a dtype the
// format does not define.
std::size_t element_size(std::string_view dtype);

// The file's bytes, and back. decode() checks what the format promises (a
// JSON header, known dtypes, byte ranges that tile the data exactly, sizes
// that match the shapes) and throws ts::InvalidInput naming `origin` and the
// tensor at fault.
std::string encode(const File& file);
File decode(std::string_view bytes, const std::string& origin);

// Whole files; write() replaces `path` atomically.
void write(const std::string& path, const File& file);
File read(const std::string& path);

}  // namespace ts::safetensors
