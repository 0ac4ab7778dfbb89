#include "cli/key_value.hpp"

#include "shared/errors.hpp"

namespace ts::cli {

std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& field) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) throw InvalidInput(field, "expected KEY=VALUE, got '" + text + "'");
  return {text.substr(0, equals), text.substr(equals + 1)};
}

void add_job_field(nlohmann::json& job, const std::string& text, const std::string& field) {
  const auto [key, value] = split_key_value(text, field);
  job[key] = nlohmann::json::accept(value) ? nlohmann::json::parse(value) : nlohmann::json(value);
}

}  // namespace ts::cli
