#pragma once
// The starting point every runner can share (docs/frameworks.md): a job's
// initial weights and a reference batch, as safetensors files in PyTorch's
// names and layouts (state_dict names, OIHW kernels, [out, in] linear
// weights, NCHW images). The worker writes both for a job; every runner
// loads them when the job names them (`initial_weights`, `reference_batch`)
// and converts to its own layouts.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "runners/libtorch/data/synthetic_data.hpp"
#include "runners/libtorch/job.hpp"
#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

// The parameters and buffers the job's model starts from, seeded as an
// experiment seeds them.
void write_initial_weights(const Job& job, const std::string& path);
// Rank 0's first synthetic batch: inputs F32 [batch, sample...], targets I64
// [batch]; a language model's, inputs and targets I64 [batch, seq_len].
void write_reference_batch(const Job& job, const std::string& path);

// Copies the file's tensors into every parameter and buffer of `module`,
// by name. Throws std::runtime_error naming the file and what does not
// match (a name missing or left over, a shape): partial loads are refused.
void load_initial_weights(torch::nn::Module& module, const std::string& path);
// The reference batch of `path` on `device`, checked against the job's batch
// size, the model's sample shape and its number of classes (its vocabulary,
// for a language model's token ids).
Batch read_reference_batch(const std::string& path, int64_t batch_size, const Model& model,
                           const torch::Device& device);

}  // namespace ts::worker
