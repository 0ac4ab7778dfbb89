#pragma once
// The output of a fixed command run through the shell. Only commands the
// agent composes itself, from executables on its own command line, are
// ever run this way; nothing from the network.
#include <string>
#include <string_view>

namespace ts::agent {

// Standard output of `command` ("" when it cannot be started).
std::string output_of(const std::string& command);
// `text` as one single-quoted shell word.
std::string shell_quoted(std::string_view text);

}  // namespace ts::agent
