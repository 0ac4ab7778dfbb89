#include "readers/sql_parts.hpp"

#include <charconv>

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

nlohmann::json cell(store::Statement& row, int column) {
  if (row.is_null(column)) return nullptr;
  const auto text = row.text(column);
  int64_t integer = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
      error == std::errc() && end == text.data() + text.size()) {
    return integer;
  }
  return text;
}

std::string json_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
}

}  // namespace ts::readers
