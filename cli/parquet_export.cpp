#include "cli/parquet_export.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "readers/export.hpp"
#include "shared/beside_this_program.hpp"
#include "shared/errors.hpp"

extern char** environ;

namespace ts::cli {

namespace {

std::filesystem::path writer_beside_self() {
  const auto writer = beside_this_program("torchsweep-parquet");
  if (writer.empty() || ::access(writer.c_str(), X_OK) != 0) {
    throw std::runtime_error("the Parquet writer " + (writer.empty() ? "torchsweep-parquet" : writer.string()) +
                             " is missing: it is built beside torchsweep when the analysis venv exists "
                             "(scripts/framework-venvs)");
  }
  return writer;
}

// The tables handed over, removed however the export ends.
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
  if (const int error = ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); error != 0) {
    throw std::system_error(error, std::generic_category(), arguments[0]);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void export_parquet(readers::Database& database, const readers::ResultFilter& filter,
                    const std::filesystem::path& folder) {
  if (folder.empty() || !std::filesystem::is_directory(folder)) {
    throw InvalidInput("--out", "expected an existing folder for the Parquet files, got '" + folder.string() + "'");
  }
  const auto writer = writer_beside_self();
  nlohmann::json tables = nlohmann::json::object();
  for (const auto& name : readers::export_tables()) {
    const auto table = readers::export_table(database, filter, name);
    nlohmann::json columns = nlohmann::json::array();
    for (const auto& column : readers::export_columns(name)) {
      columns.push_back({{"name", column.name}, {"type", column.type}});
    }
    tables[name] = {{"columns", columns}, {"rows", table.rows}};
  }
  const HandOver hand_over{folder / (".torchsweep-export." + std::to_string(::getpid()) + ".json")};
  {
    std::ofstream out(hand_over.path);
    out << nlohmann::json{{"tables", tables}};
    if (!out.flush()) throw std::runtime_error("cannot write " + hand_over.path.string());
  }
  const int code = run_and_wait({writer.string(), "--input", hand_over.path.string(), "--out", folder.string()});
  if (code != 0) throw std::runtime_error("the Parquet writer failed (exit " + std::to_string(code) + ")");
}

}  // namespace ts::cli
