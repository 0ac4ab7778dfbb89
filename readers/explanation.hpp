#pragma once
// `torchsweep explain A B` (docs/explain.md): why configuration B's step
// takes more (or less) time than A's. Each side is a result filter that
// must name one configuration; its timed steps give the measured difference
// with its interval, its newest profiled run (job field profile) the
// operators and kernels, which are paired by name and sorted by their share
// of that difference. The operators' sum is reconciled against the measured
// difference, and what the profile cannot explain is named: time outside
// any operator and the profiler's own cost. The compiler's own differences
// and the memory figures come from the same runs.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "readers/vocabulary.hpp"

namespace ts::readers {

// One side: axis values, and the sweeps or tags its runs come from.
struct ExplainSideSpec {
  std::string text;  // as the user gave it, for messages: "mode=eager"
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::string> sweeps, tags;  // replace the shared filter's when given
};

// "AXIS=VALUE[,AXIS=VALUE...]", an axis of the query vocabulary or sweep= /
// tag=; throws ts::InvalidInput naming `name` (A or B).
ExplainSideSpec parse_side(const std::string& name, const std::string& text);

struct ExplainOptions {
  ResultFilter filter;                   // both sides'
  std::array<ExplainSideSpec, 2> sides;  // A, then B
  std::size_t top = 15;                  // operator and kernel rows
  std::uint64_t seed = 0;
  std::string artifacts;  // the folder of the store's artifacts (the traces' paths); empty: none
};

struct ExplainSide {
  std::string name, spec;        // "A", "mode=eager"
  ResultFilter filter;           // options.filter narrowed by spec
  nlohmann::json configuration;  // axis -> value, store::configuration_axes()'s
  std::size_t runs = 0;          // its ok results that pass the filter
  std::set<std::string> torch_versions;  // the PyTorch versions its runs report (none for other frameworks)
  std::string sweep_id;          // of the newest of them
  nlohmann::json job;            // what a profiling run of it starts from: the newest run's job, as submitted
  // The newest ok result with a profile taken: of the configuration anywhere in the store, or, where both
  // sides are one configuration (a night against its baseline), among the side's own runs.
  std::optional<std::pair<std::string, std::int64_t>> profiled;
  bool same_configuration = false;  // as the other side's: its own runs' profiles only, none made afterwards
};

// Both sides, resolved. Throws ts::InvalidInput naming the side: no ok
// result passing it, or several configurations (naming the axes whose
// values differ).
std::array<ExplainSide, 2> explain_sides(Database& database, const ExplainOptions& options);

// The explanation (docs/explain.md has its fields). Throws ts::InvalidInput
// naming the side without a profiled run.
nlohmann::json explain(Database& database, const ExplainOptions& options);

}  // namespace ts::readers
