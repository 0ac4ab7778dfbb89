#pragma once
// The regressions a nightly found, as the store's regressions table keeps
// them (schemas/store/0027_regressions.sql, docs/bisect.md "A stored
// regression"): computed here from the store read-only, recorded by the
// coordinator, listed by `query --regressions`, and what `torchsweep bisect
// ID` starts from.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "readers/query.hpp"

namespace ts::readers {

// A regression's id: "r-" and 12 hex digits of the night's sweep, the baseline's and the configuration (the same
// night judged again against the same baseline keeps its ids).
std::string regression_id(const std::string& sweep_id, const std::string& baseline_id,
                          const nlohmann::json& configuration);

// The rows of `table` (readers::regressions of the night `current`, against the sweep `baseline_id`) the rule
// called regressed, as record_regressions carries them (schemas/protocol/record_regressions.schema.json).
std::vector<nlohmann::json> regression_records(Database& database, const Table& table, const ResultFilter& current,
                                               const std::string& baseline_id, const std::string& metric);

// The stored regression `id`, or none.
std::optional<nlohmann::json> stored_regression(Database& database, const std::string& id);

// query --regressions: the stored regressions, newest first, of the filter's sweeps where it names any.
Table regressions_table(Database& database, const ResultFilter& filter);

}  // namespace ts::readers
