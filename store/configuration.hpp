#pragma once
// What a configuration is (docs/store.md): the results' axes whose values
// together name one. The one list: `torchsweep query`'s default grouping,
// the report's, and the config_medians view, which is generated from it
// whenever a writer opens the store, so an analyst's SQL and the CLI never
// pool differently.
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::store {

struct ConfigurationAxis {
  std::string name;
  std::string sql;  // over the results table as alias r
  // NULL for every result but some (a language model's sequence lengths, an
  // image model's layout): query lists it only where a result has a value.
  bool sparse = false;
};

const std::vector<ConfigurationAxis>& configuration_axes();

// A rerun of `torchsweep confirm` (jobs.purpose), over alias r: queries and
// the view count the sweep's own runs apart from it. Results without a job
// row (imported documents) are measurements.
inline constexpr const char* confirmation_run_sql =
    "EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = r.job_id AND j.purpose = 'confirmation')";

// CREATE VIEW config_medians over configuration_axes().
std::string config_medians_view_sql();
// Whether the store's config_medians is the one config_medians_view_sql() makes.
bool config_medians_view_is_current(Database& database);
// Makes the view anew where it is missing or another list's (a writer's open).
void make_config_medians_view(Database& database);

}  // namespace ts::store
