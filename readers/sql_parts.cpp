#include "readers/sql_parts.hpp"

namespace ts::readers {

std::string placeholders(std::size_t n) {
  std::string text;
  for (std::size_t i = 0; i < n; ++i) text += i == 0 ? "?" : ",?";
  return text;
}

void bind_texts(store::Statement& statement, const std::vector<std::string>& values, int first) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    statement.bind(first + static_cast<int>(i), std::string_view(values[i]));
  }
}

std::string json_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
}

}  // namespace ts::readers
