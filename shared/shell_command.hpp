#pragma once
// The output of fixed commands run through the shell. Only commands a
// torchsweep program composes itself (the agent's probes of executables on
// its command line or beside its binary, git for a model's commits), every
// word it did not write quoted, are ever run this way; nothing from the
// network.
#include <string>
#include <string_view>
#include <vector>

namespace ts {

struct CommandOutput {
  std::string out;  // standard output
  int status = -1;  // exit status; -1 when it could not be started or was killed
};

// Standard output of `command` ("" when it cannot be started).
std::string output_of(const std::string& command);
// Every command started before any is read, so that slow starters (Python
// runners importing their framework) overlap; results in the same order.
std::vector<CommandOutput> outputs_of(const std::vector<std::string>& commands);
// `text` as one single-quoted shell word.
std::string shell_quoted(std::string_view text);

}  // namespace ts
