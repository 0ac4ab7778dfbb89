#pragma once
// "KEY=VALUE" command-line arguments (--label, --runner, --where).
#include <map>
#include <string>
#include <utility>

namespace ts::cli {

// Splits at the first '='; throws ts::InvalidInput naming `field` when there
// is none or the key is empty.
std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& field);

inline void add_key_value(std::map<std::string, std::string>& into, const std::string& text, const std::string& field) {
  auto [key, value] = split_key_value(text, field);
  into.insert_or_assign(std::move(key), std::move(value));
}

}  // namespace ts::cli
