#include "cli/python_writer.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "shared/beside_this_program.hpp"
#include "shared/errors.hpp"

extern char** environ;

namespace ts::cli {

namespace {

std::filesystem::path writer_beside_self(const std::string& program) {
  const auto writer = beside_this_program(program);
  if (writer.empty() || ::access(writer.c_str(), X_OK) != 0) {
    throw std::runtime_error("the writer " + (writer.empty() ? program : writer.string()) +
                             " is missing: it is built beside torchsweep when its venv exists "
                             "(scripts/framework-venvs)");
  }
  return writer;
}

// The rows handed over, removed however the export ends.
struct HandOver {
  std::filesystem::path path;
  ~HandOver() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

int run_and_wait(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int error = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ); error != 0) {
    throw std::system_error(error, std::generic_category(), arguments[0]);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void run_writer(const std::string& program, const nlohmann::json& input, const std::filesystem::path& folder,
                const std::vector<std::string>& arguments, const std::string& target_option,
                const std::string& input_option, const std::string& interpreter) {
  const auto writer = writer_beside_self(program);
  const HandOver hand_over{folder / (".torchsweep-hand-over." + std::to_string(::getpid()) + ".json")};
  {
    std::ofstream out(hand_over.path);
    out << input;
    if (!out.flush()) throw std::runtime_error("cannot write " + hand_over.path.string());
  }
  std::vector<std::string> command{writer.string(), input_option, hand_over.path.string()};
  if (!interpreter.empty()) command.insert(command.begin(), interpreter);
  command.insert(command.end(), arguments.begin(), arguments.end());
  const int code = run_and_wait(command);
  if (code == exit_code::invalid_input)
    throw InvalidInput(target_option, "refused by " + program + ", as it says above; nothing written");
  if (code != 0) {
    throw std::runtime_error(program + " failed (exit " + std::to_string(code) + ")");
  }
}

}  // namespace ts::cli
