#include "shared/tensors/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <numeric>

#include "shared/errors.hpp"
#include "shared/json_io.hpp"

namespace ts::safetensors {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

constexpr std::size_t header_length_bytes = 8;
// The reference implementation refuses larger headers; so do we, before allocating.
constexpr uint64_t max_header_bytes = 100'000'000;

uint64_t element_count(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), uint64_t{1},
                         [](uint64_t total, int64_t extent) { return total * static_cast<uint64_t>(extent); });
}

}  // namespace

std::size_t element_size(std::string_view dtype) {
  static const std::map<std::string_view, std::size_t> sizes{
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
      {"I8", 1},  {"U64", 8}, {"U32", 4}, {"U16", 2},  {"U8", 1},  {"BOOL", 1}};
  const auto found = sizes.find(dtype);
  if (found == sizes.end()) throw InvalidInput("dtype", "unknown safetensors dtype '" + std::string(dtype) + "'");
  return found->second;
}

std::string encode(const File& file) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  // Wider elements first, then by name, as the reference writer lays them
  // out: every tensor's data stays aligned to its element size.
  std::vector<const std::pair<const std::string, Tensor>*> order;
  for (const auto& entry : file.tensors) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* left, const auto* right) {
    return element_size(left->second.dtype) > element_size(right->second.dtype);
  });
  uint64_t offset = 0;
  for (const auto* entry : order) {
    const auto& [name, tensor] = *entry;
    const auto expected = element_count(tensor.shape) * element_size(tensor.dtype);
    if (tensor.bytes.size() != expected) {
      throw InvalidInput(
          name, "holds " + std::to_string(tensor.bytes.size()) + " bytes, its shape needs " + std::to_string(expected));
    }
    header[name] = {{"dtype", tensor.dtype}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + expected}}};
    offset += expected;
  }
  auto text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as the reference writer's
  std::string bytes(header_length_bytes, '\0');
  const uint64_t length = text.size();
  for (std::size_t i = 0; i < header_length_bytes; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  bytes += text;
  for (const auto* entry : order) bytes += entry->second.bytes;
  return bytes;
}

File decode(std::string_view bytes, const std::string& origin) {
  auto invalid = [&](const std::string& field, const std::string& problem) {
    return InvalidInput(field, problem, origin);
  };
  if (bytes.size() < header_length_bytes) throw invalid("", "shorter than a safetensors header");
  uint64_t length = 0;
  for (std::size_t i = 0; i < header_length_bytes; ++i) {
    length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  if (length > max_header_bytes || length > bytes.size() - header_length_bytes) {
    throw invalid("", "header length " + std::to_string(length) + " exceeds the file");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(header_length_bytes, length));
  } catch (const nlohmann::json::parse_error& error) {
    throw invalid("", std::string("header is not JSON (") + error.what() + ")");
  }
  if (!header.is_object()) throw invalid("", "header is not a JSON object");
  const auto data = bytes.substr(header_length_bytes + length);

  File file;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    try {
      if (name == "__metadata__") {
        file.metadata = entry.get<std::map<std::string, std::string>>();
        continue;
      }
      Tensor tensor;
      tensor.dtype = entry.at("dtype").get<std::string>();
      tensor.shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      if (std::any_of(tensor.shape.begin(), tensor.shape.end(), [](int64_t extent) { return extent < 0; })) {
        throw invalid(name, "negative extent in its shape");
      }
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size()) {
        throw invalid(name,
                      "data_offsets must be [begin, end] within the " + std::to_string(data.size()) + " data bytes");
      }
      std::size_t size = 0;
      try {
        size = element_size(tensor.dtype);
      } catch (const InvalidInput& error) {
        throw invalid(name, error.problem());
      }
      const auto expected = element_count(tensor.shape) * size;
      if (offsets[1] - offsets[0] != expected) {
        throw invalid(name, "has " + std::to_string(offsets[1] - offsets[0]) + " bytes, its dtype and shape need " +
                                std::to_string(expected));
      }
      tensor.bytes.assign(data.substr(offsets[0], expected));
      ranges.emplace_back(offsets[0], offsets[1]);
      file.tensors.emplace(name, std::move(tensor));
    } catch (const nlohmann::json::exception& error) {
      throw invalid(name, std::string("not a tensor entry (") + error.what() + ")");
    }
  }
  // The ranges tile the data exactly, as the format requires: nothing
  // overlaps, nothing is left over.
  std::sort(ranges.begin(), ranges.end());
  uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != covered)
      throw invalid("", "tensor data ranges overlap or leave a gap at byte " + std::to_string(begin));
    covered = end;
  }
  if (covered != data.size())
    throw invalid("", std::to_string(data.size() - covered) + " data bytes belong to no tensor");
  return file;
}

void write(const std::string& path, const File& file) { json_io::write_bytes_atomically(path, encode(file)); }

File read(const std::string& path) { return decode(json_io::read_text(path), path); }

}  // namespace ts::safetensors
