#pragma once
// Task generate (docs/language-models.md): a decoder's greedy generation
// with a key/value cache, measured as training is (docs/methodology.md):
// warm-up generations, then each timed epoch one generation, the prompt's
// prefill its first step and the new_tokens - 1 decode steps the rest.
#include <vector>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/job.hpp"
#include "runners/libtorch/memory_probe.hpp"
#include "runners/libtorch/precision.hpp"
#include "runners/libtorch/result.hpp"

namespace ts::worker {

struct GenerationRun {
  TimingReport timing;
  GenerationReport generation;
  MemoryReport memory;
  int64_t parameters = 0;
  double initial_parameter_l1 = 0;
};

// Runs the job's generations eagerly: the cache is allocated for the
// whole generation and attention reads its filled positions only.
// `probe` was created before the model.
GenerationRun run_generation(const Job& job, torch::Device device, const PrecisionPlan& plan, MemoryProbe& probe);

}  // namespace ts::worker
