#pragma once
// Whether an imagefolder job was input-bound (docs/data.md), judged by the
// agent from what every runner reports, as the efficiency section is: one
// rule for every runner, none of it in the runners.
#include <nlohmann/json.hpp>

namespace ts::agent {

// For a successful result with a data section: each timed epoch's stall
// fraction (data.epoch_input_stall_seconds over timing.epoch_seconds),
// their median (data.median_input_stall_fraction), data.input_bound (that
// median above the job's input_bound_above), data.input_bound_epochs, and a
// warning when input-bound. Other results are left as they are.
void judge_input_stalls(nlohmann::json& result);

}  // namespace ts::agent
