#include "agent/node/probe_cache.hpp"

#include <algorithm>
#include <sstream>

#include "shared/beside_this_program.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/user_cache.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

// What changes when a file or directory does: its kind, size and
// modification time; "absent" when it is not there.
std::string stamp(const fs::path& path) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status)) return "absent";
  const auto modified = fs::last_write_time(path, error).time_since_epoch().count();
  const bool directory = fs::is_directory(status);
  const auto size = directory ? 0 : fs::file_size(path, error);
  return (directory ? "dir " : "file ") + std::to_string(size) + " " + std::to_string(modified);
}

// torchsweep's files the runners read beside this program (the harness and
// the schemas), without Python's byte-code caches, which change as they run.
std::vector<fs::path> shared_files() {
  std::vector<fs::path> files;
  const auto share = beside_this_program("../share/torchsweep");
  std::error_code error;
  if (share.empty() || !fs::is_directory(share, error)) return files;
  for (auto entry = fs::recursive_directory_iterator(share, error);
       !error && entry != fs::recursive_directory_iterator(); entry.increment(error)) {
    if (entry->path().filename() == "__pycache__") {
      entry.disable_recursion_pending();
      continue;
    }
    files.push_back(entry->path());
  }
  return files;
}

}  // namespace

ProbeCache::ProbeCache(fs::path file) : file_(std::move(file)) {
  std::error_code error;
  if (file_.empty() || !fs::exists(file_, error)) return;
  try {
    if (auto kept = json_io::read(file_.string()); kept.is_object()) entries_ = std::move(kept);
    // One file serves every agent and run of a user: entries of programs
    // since deleted (a removed venv, a test's own interpreter) are dropped,
    // so the file does not grow with them.
    for (auto entry = entries_.begin(); entry != entries_.end();) {
      const auto files = entry->is_object() ? entry->find("files") : entry->end();
      const bool gone = files == entry->end() || !files->is_array() ||
                        std::any_of(files->begin(), files->end(), [](const nlohmann::json& path) {
                          return !path.is_string() || stamp(path.get<std::string>()) == "absent";
                        });
      if (gone) {
        entry = entries_.erase(entry);
        changed_ = true;
      } else {
        ++entry;
      }
    }
  } catch (const std::exception& failure) {
    log::warn("runner probes kept in {} are unreadable ({}); the runners are asked again", file_.string(),
              failure.what());
  }
}

std::optional<ProbeAnswers> ProbeCache::find(const std::string& command) const {
  const auto entry = entries_.find(command);
  if (entry == entries_.end() || !entry->is_object()) return std::nullopt;
  try {
    for (const auto& [path, kept] : entry->at("stamps").items()) {
      if (stamp(path) != kept.get<std::string>()) return std::nullopt;
    }
    return ProbeAnswers{entry->at("version").get<std::string>(), entry->at("models").get<std::string>()};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an entry of another shape: asked again
  }
}

void ProbeCache::remember(const std::string& command, const std::vector<fs::path>& files, const ProbeAnswers& answers) {
  const auto site = parse_site(answers.version);
  if (file_.empty() || site.empty()) return;
  if (!shared_files_) shared_files_ = shared_files();
  nlohmann::json stamps = nlohmann::json::object();
  nlohmann::json programs = nlohmann::json::array();
  for (const auto& group : {files, site, *shared_files_}) {
    for (const auto& path : group) stamps[path.string()] = stamp(path);
  }
  for (const auto& path : files) {
    if (stamps.at(path.string()) != "absent") programs.push_back(path.string());
  }
  entries_[command] = {{"stamps", std::move(stamps)},
                       {"files", std::move(programs)},
                       {"version", answers.version},
                       {"models", answers.models}};
  changed_ = true;
}

void ProbeCache::save() const {
  if (!changed_) return;
  try {
    fs::create_directories(file_.parent_path());
    json_io::write_atomically(file_.string(), entries_);
  } catch (const std::exception& failure) {
    log::warn("runner probes not kept in {}: {}", file_.string(), failure.what());
  }
}

std::vector<fs::path> parse_site(const std::string& version_output) {
  std::istringstream lines(version_output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("site ")) continue;
    try {
      std::vector<fs::path> directories;
      for (const auto& path : nlohmann::json::parse(line.substr(5))) directories.emplace_back(path.get<std::string>());
      return directories;
    } catch (const nlohmann::json::exception&) {
      return {};
    }
  }
  return {};
}

fs::path user_probe_cache() {
  const auto cache = user_cache_directory();
  return cache.empty() ? cache : cache / "probes.json";
}

}  // namespace ts::agent
