#pragma once
// Reading and writing JSON documents at the program edges.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::json_io {

// The whole content of `path`, or of stdin when path is "-". Throws
// ts::InvalidInput naming the file and the system's reason when unreadable.
std::string read_text(const std::string& path);

// Reads a JSON document from `path`, or from stdin when path is "-".
// Throws ts::InvalidInput naming the file and the parse position on bad JSON.
nlohmann::json read(const std::string& path);

// Parses `text`; `origin` names where it came from in error messages.
nlohmann::json parse(std::string_view text, const std::string& origin);

// Writes `document` to stdout when path is "-", else atomically: a
// temporary file in the same directory, flushed, then renamed over `path`,
// so a reader never sees half a document.
void write_atomically(const std::string& path, const nlohmann::json& document);

// The same for any bytes (a safetensors file, ...).
void write_bytes_atomically(const std::string& path, std::string_view bytes);

}  // namespace ts::json_io
