#pragma once
// The job's profile in the LibTorch worker (job field profile,
// docs/explain.md): more steps after the timed epochs under LibTorch's
// profiler (the C++ API torch.profiler drives: Kineto where LibTorch was
// built with it), the trace (Chrome's trace event format, gzip) beside the
// result, and the result's profile section (runners/libtorch/profile_summary.hpp).
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts::worker {

// The job's profile as resolved (schemas/job.schema.json spells the defaults).
struct ProfileOptions {
  int64_t steps = 0;
  std::vector<std::string> activities;  // cpu, cuda
  bool record_shapes = false, memory = false, with_stack = false;
};

// The options of a resolved job's profile object.
ProfileOptions profile_options(const nlohmann::json& profile);

// The profile section of a job whose profile could not be taken.
nlohmann::json unavailable_profile(const ProfileOptions& options, const std::string& reason);

// Runs `step` (one step, which the profiler synchronizes on `device`)
// options.steps times under the profiler, after one step under it that it
// does not record, and returns the profile section; the trace is written
// in `folder` when `write_trace` (rank 0 of a multi-rank job).
nlohmann::json profile_steps(const ProfileOptions& options, const torch::Device& device,
                             const std::function<void()>& step, const std::filesystem::path& folder, bool write_trace);

}  // namespace ts::worker
