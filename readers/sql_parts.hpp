#pragma once
// Small pieces every reader's SQL is built from (internal to readers/):
// a list's '?' placeholders, binding the list's values to them, a column
// read as a JSON cell, and a cell's text.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::readers {

// "?,?,?" for n values.
std::string placeholders(std::size_t n);
// Binds `values`, as text, to the '?'s numbered from `first`.
void bind_texts(store::Statement& statement, const std::vector<std::string>& values, int first = 1);
// Column `column` of the current row: null, an integer when its text is
// one, else its text.
nlohmann::json cell(store::Statement& row, int column);
// A cell as text: a string as it is, null as empty, anything else as JSON.
std::string json_text(const nlohmann::json& value);

}  // namespace ts::readers
