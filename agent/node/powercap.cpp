#include "agent/node/powercap.hpp"

#include <algorithm>
#include <fstream>

namespace ts::agent {
namespace {

std::optional<uint64_t> read_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::string read_word(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

Powercap::Powercap(std::filesystem::path root) {
  std::error_code error;
  if (!std::filesystem::is_directory(root, error))
    throw PowercapUnavailable("no powercap interface at " + root.string() + " (no RAPL on this machine or kernel)");
  std::vector<Zone> all;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const auto directory = entry.path().filename().string();
    // Top-level zones only (intel-rapl:0, not intel-rapl:0:0): a package's core and uncore zones are inside its figure.
    if (!directory.starts_with("intel-rapl:") || directory.find(':') != directory.rfind(':')) continue;
    const auto range = read_number(entry.path() / "max_energy_range_uj");
    all.push_back({read_word(entry.path() / "name"), entry.path() / "energy_uj", range.value_or(0)});
  }
  if (all.empty()) throw PowercapUnavailable("no RAPL zone under " + root.string());
  std::sort(all.begin(), all.end(), [](const Zone& a, const Zone& b) { return a.name < b.name; });
  for (const auto& zone : all)
    if (zone.name.starts_with("package")) zones_.push_back(zone);
  if (zones_.empty()) zones_ = all;
  for (const auto& zone : zones_) {
    if (!read_number(zone.energy_file))
      throw PowercapUnavailable(zone.energy_file.string() +
                                " cannot be read (since Linux 5.10 only root can read RAPL counters)");
  }
}

std::vector<EnergyDomain> Powercap::domains() const {
  std::vector<EnergyDomain> domains;
  for (const auto& zone : zones_)
    domains.push_back({zone.name, 1e-6, zone.range_uj > 0 ? std::optional<uint64_t>(zone.range_uj) : std::nullopt});
  return domains;
}

std::vector<EnergyMeter::Reading> Powercap::read() const {
  std::vector<EnergyMeter::Reading> readings;
  for (const auto& zone : zones_) readings.push_back({read_number(zone.energy_file), std::nullopt});
  return readings;
}

}  // namespace ts::agent
