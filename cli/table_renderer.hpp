#pragma once
// The one table renderer of every table the CLI prints (query, export,
// confirm, status, submit, run): aligned text for people, CSV or JSON for
// programs.
#include <cstddef>
#include <string>

#include "readers/table.hpp"

namespace ts::cli {

using readers::Table;

enum class Format { table, csv, json };
Format parse_format(const std::string& text, const std::string& field);
// `width` (table format only; 0: no limit) is the terminal's: a table wider
// than it is printed in blocks of columns, each repeating the leading text
// columns that name the row, so no line wraps. For people, columns equal on
// every row become a caption line, an estimate and its interval (X, X_low,
// X_high) share one column, and relative changes read as percentages.
std::string render(const Table& table, Format format, std::size_t width = 0);

}  // namespace ts::cli
