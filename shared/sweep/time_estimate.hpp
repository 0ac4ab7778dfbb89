#pragma once
// How long a planned job will take, estimated before anything runs
// (`torchsweep estimate`, docs/sweeps.md): its steps' FLOPs
// (shared/models/flops.hpp) against the measured peak of the devices it
// will run on at a stated fraction of that peak (the MFU), plus stated
// allowances for what FLOPs do not measure: a runner's start and a compiled
// job's compile time and accuracy gate. What a time-boxed run (a GPU lease,
// a nightly slot) schedules by; the assumptions are the caller's, printed
// beside the figure.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::sweep {

struct EstimateAssumptions {
  double mfu = 0;      // the fraction of the peak a step reaches, in (0, 1]
  double start_s = 0;  // every job: the runner's start, framework import, device context, synthetic data
  // A compiled job, by runner: its compile time and accuracy gate; a runner
  // not named gets `compile_s_otherwise`.
  std::map<std::string, double> compile_s;
  double compile_s_otherwise = 0;
  double decode_step_s = 0;  // the least one decode step of a generation takes: bound by memory, not FLOPs
};

struct JobEstimate {
  double flops_per_step = 0;  // a training or inference step, or one decode step of a generation
  int64_t steps = 0;          // warm-up and timed
  std::string peak_dtype;     // the peak figure used: fp32 (IEEE), tf32 (only with tf32: on), bf16 (bf16, fp16)
  double peak_flops_per_s = 0;
  double compute_s = 0;    // steps x max(FLOPs / (peak x MFU), the decode floor for a generation)
  double allowance_s = 0;  // start, and compile for a compiled job
  double seconds = 0;
};

// Throws ts::InvalidInput naming the field when the job's model has no FLOP
// formula or `peak_flops` (schemas/peak_flops.schema.json) has no figure for
// its devices and dtype.
JobEstimate estimate_job(const nlohmann::json& job, const nlohmann::json& peak_flops,
                         const EstimateAssumptions& assumptions);

}  // namespace ts::sweep
