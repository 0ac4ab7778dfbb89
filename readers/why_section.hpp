#pragma once
// The report's "Why" section (docs/report.md, docs/explain.md):
// `torchsweep explain` of each compiled-vs-eager pair the report shows and
// of each regression it flags or confirms, where both sides' runs carry
// profiles: the measured difference, the operators that make most of it,
// the reconciliation, and links to both traces. The report runs nothing:
// pairs without profiles are counted, with what would give them one.
#include <nlohmann/json.hpp>
#include <string>

#include "readers/explanation.hpp"
#include "readers/table.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

struct WhyInputs {
  ResultFilter filter;                          // the report's current runs
  const Table* by_mode = nullptr;               // query --compare mode over them
  const nlohmann::json* regressions = nullptr;  // the regressions table (columns, rows); null: no baseline
  std::string baseline_id;
  std::string artifacts;    // the store's artifacts folder; empty: a store in memory
  std::string page_folder;  // where the page goes: the traces' links are relative to it
};

// What explains a regression row (the regressions table's): the baseline sweep's runs of its configuration as A,
// `current`'s as B.
ExplainOptions regression_explanation(const nlohmann::json& row, const ResultFilter& current,
                                      const std::string& baseline_id);
// Whether the Why section explains a regression row: regressed, and flagged (not rerun yet) or confirmed.
bool explained_regression(const nlohmann::json& row);

// {entries: [...], without_profiles: N}; an entry has kind ("compiled vs eager", "regression"), title, the
// sides' specs and trace links, timed, reconciliation and the top operators and kernels.
nlohmann::json why_section(Database& database, const WhyInputs& inputs);

}  // namespace ts::readers
