#pragma once
// Which eager run each compiled run is compared with, run by run (the
// exports to experiment trackers show a compiled run's speedup beside it):
// the eager result of the same sweep, configuration (every configuration
// axis but the mode) and repeat.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "readers/vocabulary.hpp"

namespace ts::readers {

using ResultKey = std::pair<std::string, int64_t>;  // job_id, attempt

struct EagerPartner {
  ResultKey eager;
  std::optional<double> speedup;  // eager median epoch time / compiled; none when either is missing
};

// For every compiled result `filter` lets through that has an eager partner
// (its own status ok), keyed by the compiled result. The partner itself
// need not pass the filter.
std::map<ResultKey, EagerPartner> eager_partners(Database& database, const ResultFilter& filter);

}  // namespace ts::readers
