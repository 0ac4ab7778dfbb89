#pragma once
// "KEY=VALUE" command-line arguments (--label, --runner, --where).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace ts::cli {

// Splits at the first '='; throws ts::InvalidInput naming `field` when there
// is none or the key is empty.
std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& field);

// KEY=VALUE as a job field of `job` (weights --set, bisect's configuration):
// the value read as JSON where it parses (64, true, {"a": 1}), else as a string.
void add_job_field(nlohmann::json& job, const std::string& text, const std::string& field);

inline void add_key_value(std::map<std::string, std::string>& into, const std::string& text, const std::string& field) {
  auto [key, value] = split_key_value(text, field);
  into.insert_or_assign(std::move(key), std::move(value));
}

}  // namespace ts::cli
