#include "shared/json_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "shared/errors.hpp"

namespace ts::json_io {

nlohmann::json parse(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InvalidInput("", origin + ": not valid JSON (" + e.what() + ")");
  }
}

std::string read_text(const std::string& path) {
  if (path == "-") return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput("", path + ": cannot be read (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json read(const std::string& path) { return parse(read_text(path), path == "-" ? "stdin" : path); }

void write_atomically(const std::string& path, const nlohmann::json& document) {
  write_bytes_atomically(path, document.dump(2) + "\n");
}

void write_bytes_atomically(const std::string& path, std::string_view text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  const std::filesystem::path target(path);
  auto temporary = target;
  temporary += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + temporary.string() + ": " + std::strerror(errno));
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw std::runtime_error("cannot rename " + temporary.string() + " to " + path + ": " + error.message());
  }
}

}  // namespace ts::json_io
