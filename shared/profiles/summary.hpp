#pragma once
// The result's profile summary (schemas/result.schema.json, profile) from
// the events LibTorch's profiler recorded, summed the way torch.profiler's
// key_averages() sums them (torch/autograd/profiler_util.py), so that
// `torchsweep explain` pairs this runner's operators with the
// torch-compile runner's: an operator's self time is its time less that
// of the operators nested in it on its thread; a GPU kernel counts towards
// the operator whose correlation id it is linked to.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ts::profiles {

// How a runner marks each profiled step in its trace, as torch.profiler
// does: "ProfilerStep#1", "ProfilerStep#2", ...
inline constexpr std::string_view kStepMark = "ProfilerStep#";

// One recorded event, as the summary needs it.
struct ProfiledEvent {
  std::string name;
  bool on_device = false;  // a GPU kernel or copy (its device's time); else a host event
  bool async = false;      // started and ended on different threads: nests nothing
  uint64_t thread = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t correlation = 0;         // a host event's own id
  uint64_t linked_correlation = 0;  // a kernel's: the host event that launched it (0: none)
  std::string input_shapes;         // as torch.profiler prints them, "[[8, 32], []]"; empty: not recorded
};

// Rows kept per table; the totals and the trace have every event.
struct SummaryLimits {
  std::size_t operators = 100, operator_shapes = 30, kernels = 100;
};

// The section's operators, operator_shapes (when `by_shape`), kernels and
// totals, per profiled step over `steps` steps; the most self time first
// (the device's where `kernels_recorded`). The step marks, ProfilerStep#N,
// are one row, ProfilerStep*, as in key_averages(); what torch.profiler
// leaves out of its tables (its own bookkeeping, the memory records: they
// stay in the trace) is left out before anything nests.
nlohmann::json summarize_profile(std::vector<ProfiledEvent> events, int64_t steps, bool by_shape, bool kernels_recorded,
                                 const SummaryLimits& limits = {});

}  // namespace ts::profiles
