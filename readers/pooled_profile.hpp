#pragma once
// Several runs' profile sections (result.schema.json's profile) as one, for
// `torchsweep explain` (docs/explain.md): per operator and per kernel the
// median over the runs of its calls and times, the totals and the profiled
// step the medians of the runs', so one disturbed run moves nothing much.
#include <nlohmann/json.hpp>
#include <vector>

namespace ts::readers {

// `profiles`: at least one, ok, the first the newest (its profiler and
// activities are the pool's). A run without a row for a name counts 0 for it
// where its list was every name (totals says), else it is left out of that
// name's median. A run's profiled step is the mean of its profiled steps,
// as its operators' times are means over them. The pool's `runs` is how
// many; `complete` whether every run's rows were all its names.
nlohmann::json pooled_profile(const std::vector<nlohmann::json>& profiles);

}  // namespace ts::readers
