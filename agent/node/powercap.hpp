#pragma once
// The kernel's powercap interface to the CPU packages' RAPL energy counters
// (/sys/class/powercap/intel-rapl:N, AMD's too since Linux 5.17): what a
// CPU job's energy is read from (agent/node/energy_meter.hpp). Since Linux
// 5.10 the counters are readable by root only (CVE-2020-8694); an agent
// that cannot read them says so.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/node/energy_meter.hpp"

namespace ts::agent {

// No counter can be read under the root; what() says why.
class PowercapUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Powercap {
 public:
  // The package zones under `root` (the top-level intel-rapl:N whose name
  // is package-N; every top-level zone where none is, since a psys zone
  // beside packages would count them twice). Throws PowercapUnavailable.
  explicit Powercap(std::filesystem::path root = "/sys/class/powercap");

  // The zones as the energy meter counts them (microjoules, their wrap).
  std::vector<EnergyDomain> domains() const;
  // Each zone's counter now; none where it could not be read.
  std::vector<EnergyMeter::Reading> read() const;

 private:
  struct Zone {
    std::string name;
    std::filesystem::path energy_file;
    uint64_t range_uj;
  };
  std::vector<Zone> zones_;
};

}  // namespace ts::agent
