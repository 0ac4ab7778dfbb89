#pragma once
// Where a profiled step's time goes, per configuration (docs/explain.md):
// the operator and the GPU kernel most often on top of its profiled runs
// (the results' top_operator and top_kernel columns) with their median
// share of every operator's or kernel's time. `torchsweep run` prints it
// under a profiled sweep's medians; `torchsweep explain` compares two.
#include "readers/table.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

// One row a configuration with a profiled run among `filter`'s results; none when no result has a profile.
Table profile_tops(Database& database, const ResultFilter& filter);

}  // namespace ts::readers
