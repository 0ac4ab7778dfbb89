#pragma once
// Why the first bad step is slower (torchsweep bisect --explain,
// docs/bisect.md): the last good and the first bad profiled in one paired
// sweep of their own, then explained (docs/explain.md). One sweep, pairs in
// alternation: the steps' own sweeps ran hours apart on a machine whose
// speed drifts, and their unpaired difference is not the step's.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ts::cli {

struct WhySweep {
  std::string field;  // env or model_commit
  std::string last_good, first_bad;
  nlohmann::json configuration;  // the bisection's job fields
  std::string bisection_tag;     // bisect-ID
  int64_t runs = 5;              // a side: explain takes the median of run medians from 5
  std::optional<int64_t> profile_steps;

  // The tag of this pair's sweep: of the bisection and of its two sides, so a rerun finds it.
  std::string tag() const;
  // The sweep document: the configuration with a profile, both sides paired, `runs` each.
  nlohmann::json document() const;
};

// The newest sweep of `why` in the store `db` that was not cancelled, if an earlier start ran one.
std::optional<std::string> why_sweep_in(const std::string& db, const WhySweep& why);

// The explanation (readers::explain's document) of the first bad against the last good from the runs of
// sweep `sweep_id`. Throws ts::InvalidInput when a side has no ok run or no profile (the runner's reason).
nlohmann::json explain_pair(const std::string& db, const WhySweep& why, const std::string& sweep_id);

}  // namespace ts::cli
