#include "shared/git.hpp"

#include <cctype>

#include "shared/shell_command.hpp"

namespace ts {

std::optional<std::string> git_output(const std::filesystem::path& directory, const std::string& arguments) {
  auto output = outputs_of({"git -C " + shell_quoted(directory.string()) + " " + arguments + " 2>/dev/null"}).at(0);
  if (output.status != 0) return std::nullopt;
  while (!output.out.empty() && std::isspace(static_cast<unsigned char>(output.out.back()))) output.out.pop_back();
  return output.out;
}

std::optional<std::string> full_commit(const std::filesystem::path& directory, const std::string& name) {
  auto sha = git_output(directory, "rev-parse --verify --quiet " + shell_quoted(name + "^{commit}"));
  if (!sha || sha->empty()) return std::nullopt;
  return sha;
}

}  // namespace ts
