#pragma once
// Runner probes kept across starts (docs/environments.md). A Python
// runner's --version and --list-models import its framework and list every
// model its environment's libraries have: seconds to tens of seconds an
// environment. So their answers are kept in a file, each with the size and
// modification time of what it depends on: the command's files (the
// interpreter, the runner), torchsweep's shared files beside this program
// (harness, schemas) and the directories of the interpreter's sys.path,
// which a pip install or uninstall changes. When one of them has changed
// the runner is asked again. Only runners whose --version names what they
// load (the `site` line: the Python harness prints its sys.path, the
// LibTorch worker its shared libraries, whose --list-models builds every
// model) are kept; any other program is always asked.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ts::agent {

struct ProbeAnswers {
  std::string version, models;  // the standard output of --version and --list-models
};

class ProbeCache {
 public:
  // Reads `file`; an empty path keeps nothing, and a file that does not
  // parse is an empty cache (it is written again).
  explicit ProbeCache(std::filesystem::path file);

  // The answers kept for `command` (the probe's shell words), if nothing
  // they depend on has changed since.
  std::optional<ProbeAnswers> find(const std::string& command) const;
  // Keeps the answers of `command`, whose words `files` name its files,
  // where its --version names the directories of its sys.path.
  void remember(const std::string& command, const std::vector<std::filesystem::path>& files,
                const ProbeAnswers& answers);
  // Writes the file (atomically), if anything was remembered; a failure is
  // logged, not thrown: a cache that cannot be written costs only time.
  void save() const;

 private:
  std::filesystem::path file_;
  nlohmann::json entries_ = nlohmann::json::object();
  bool changed_ = false;
  std::optional<std::vector<std::filesystem::path>> shared_files_;  // listed at the first remember()
};

// The `site` line of a Python runner's --version (`site ["DIR", ...]`):
// the directories of its sys.path; empty when there is none.
std::vector<std::filesystem::path> parse_site(const std::string& version_output);

// Where a user's programs (agents, `torchsweep run`, `submit --dry-run`)
// keep their probes: $XDG_CACHE_HOME/torchsweep/probes.json, else
// ~/.cache/...; empty without either variable.
std::filesystem::path user_probe_cache();

}  // namespace ts::agent
