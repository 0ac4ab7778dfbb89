#pragma once
// Small pieces every reader's SQL is built from (internal to readers/):
// a list's '?' placeholders, binding the list's values to them, and a
// cell's text.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::readers {

// "?,?,?" for n values.
std::string placeholders(std::size_t n);
// Binds `values`, as text, to the '?'s numbered from `first`.
void bind_texts(store::Statement& statement, const std::vector<std::string>& values, int first = 1);
// A cell as text: a string as it is, null as empty, anything else as JSON.
std::string json_text(const nlohmann::json& value);

}  // namespace ts::readers
