#include "shared/shell_command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>

namespace ts {
namespace {

using Pipe = std::unique_ptr<FILE, int (*)(FILE*)>;

std::string read_all(FILE* pipe) {
  std::string output;
  std::array<char, 512> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe)) output += chunk.data();
  return output;
}

}  // namespace

std::string output_of(const std::string& command) { return outputs_of({command}).front().out; }

std::vector<CommandOutput> outputs_of(const std::vector<std::string>& commands) {
  std::vector<Pipe> pipes;
  for (const auto& command : commands) pipes.emplace_back(popen(command.c_str(), "r"), pclose);
  std::vector<CommandOutput> outputs;
  for (auto& pipe : pipes) {
    CommandOutput output;
    if (pipe) {
      output.out = read_all(pipe.get());
      const int status = pclose(pipe.release());  // its exit status, which the deleter would drop
      output.status = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

std::string shell_quoted(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace ts
