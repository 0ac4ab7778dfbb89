#pragma once
// git, run on a repository a torchsweep program was pointed at (a model
// root's, `torchsweep bisect --repo`), through shared/shell_command.hpp.
#include <filesystem>
#include <optional>
#include <string>

namespace ts {

// The standard output of `git -C DIRECTORY ARGUMENTS` (ARGUMENTS already
// quoted where they need it), trailing whitespace trimmed; nothing when git
// failed (its error output is dropped: callers say what it means).
std::optional<std::string> git_output(const std::filesystem::path& directory, const std::string& arguments);

// The full SHA of commit `name` (a SHA, its prefix, a tag or branch) in the
// repository holding `directory`; nothing when it names no commit there.
std::optional<std::string> full_commit(const std::filesystem::path& directory, const std::string& name);

}  // namespace ts
