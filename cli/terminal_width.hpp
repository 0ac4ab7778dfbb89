#pragma once
// How wide the human tables may be: the terminal's columns when stdout is a
// terminal, else $COLUMNS when set, else no limit (0): a pipe or a file
// gets the whole lines.
#include <cstddef>

namespace ts::cli {

std::size_t terminal_width();

}  // namespace ts::cli
