#include "agent/spool.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"

namespace ts::agent {

std::string file_name_of(const std::string& job_id, int64_t attempt) {
  auto name = job_id;
  std::replace(name.begin(), name.end(), '/', '_');
  return fmt::format("{}.attempt-{}", name, attempt);
}

Spool::Spool(std::filesystem::path directory) : directory_(std::move(directory)) {
  std::filesystem::create_directories(directory_);
  for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
    if (entry.path().extension() != ".json") continue;  // a .tmp left by a crash mid-write
    try {
      unacknowledged_[entry.path()] = json_io::read(entry.path().string());
    } catch (const InvalidInput& error) {
      log::warn("spool: skipping {}: {}", entry.path().string(), error.what());
    }
  }
  if (!unacknowledged_.empty()) log::info("spool: {} outcomes wait for delivery", unacknowledged_.size());
}

std::filesystem::path Spool::file_of(const std::string& job_id, int64_t attempt) const {
  return directory_ / (file_name_of(job_id, attempt) + ".json");
}

void Spool::keep(const nlohmann::json& outcome) {
  const auto file = file_of(outcome.at("job_id"), outcome.at("attempt"));
  json_io::write_atomically(file.string(), outcome);
  unacknowledged_[file] = outcome;
}

bool Spool::acknowledge(const std::string& job_id, int64_t attempt, bool superseded) {
  const auto file = file_of(job_id, attempt);
  if (unacknowledged_.erase(file) == 0) return false;
  if (superseded) {
    const auto kept = directory_ / "superseded" / file.filename();
    std::filesystem::create_directories(kept.parent_path());
    std::filesystem::rename(file, kept);
    log::info("the outcome of {} attempt {} came after the coordinator gave up on it; kept in {}", job_id, attempt,
              kept.string());
  } else {
    std::filesystem::remove(file);
  }
  return true;
}

}  // namespace ts::agent
