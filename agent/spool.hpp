#pragma once
// The agent's spool (docs/operations.md): every outcome (job_result or
// job_failed message) is written here before it is sent, and stays until
// the coordinator acknowledges it, so a lost connection or a restart loses
// no result. An outcome the coordinator had already given up on is kept in
// spool/superseded/, never stored. Files are written atomically; a .tmp
// left by a crash mid-write is ignored.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::agent {

class Spool {
 public:
  // Opens (creating) `directory` and reads what a previous life left there.
  explicit Spool(std::filesystem::path directory);

  // Writes the outcome of its job_id and attempt; throws if it cannot, as an
  // outcome that cannot be kept must not vanish.
  void keep(const nlohmann::json& outcome);
  // The coordinator acknowledged that outcome; false if none was kept.
  // `superseded`: it was not stored, and is moved aside instead of deleted.
  bool acknowledge(const std::string& job_id, int64_t attempt, bool superseded);
  // Outcomes kept and not acknowledged yet, oldest file name first.
  const std::map<std::filesystem::path, nlohmann::json>& unacknowledged() const noexcept { return unacknowledged_; }

 private:
  std::filesystem::path file_of(const std::string& job_id, int64_t attempt) const;

  std::filesystem::path directory_;
  std::map<std::filesystem::path, nlohmann::json> unacknowledged_;  // spool file -> outcome message
};

// A job attempt as a file name: '/' separates sweep and ordinal.
std::string file_name_of(const std::string& job_id, int64_t attempt);

}  // namespace ts::agent
