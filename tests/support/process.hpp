#pragma once
// Runs a program to completion for tests: exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ts::testing {

struct Finished {
  int exit_code = -1;
  std::string out, err;
};

inline std::string quoted(const std::string& word) {
  std::string text = "'";
  for (char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs argv (no shell interpretation of its words) with `input` on stdin.
inline Finished run_program(const std::vector<std::string>& argv, const std::string& input = "") {
  const auto directory = std::filesystem::temp_directory_path() /
                         ("ts_process_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "in") << input;
  std::string command;
  for (const auto& word : argv) command += quoted(word) + " ";
  command += "<" + quoted(directory / "in") + " >" + quoted(directory / "out") + " 2>" + quoted(directory / "err");
  const int status = std::system(command.c_str());
  Finished finished{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(directory / "out"), slurp(directory / "err")};
  std::filesystem::remove_all(directory);
  return finished;
}

}  // namespace ts::testing
