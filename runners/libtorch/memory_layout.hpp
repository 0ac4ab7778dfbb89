#pragma once
// An image model's layout (job memory_format, docs/worker.md): contiguous
// (NCHW) or channels_last (NHWC, where cuDNN's tensor-core convolutions
// run). The values never change with it: the same start holds in both.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "runners/libtorch/job.hpp"
#include "runners/libtorch/models/model.hpp"

namespace ts::worker {

// The layout `job` asks for.
torch::MemoryFormat memory_format_of(const Job& job);

// Puts `model`'s 4-D weights in `job`'s layout and returns it; throws
// Unsupported for channels_last on a model that takes no images.
torch::MemoryFormat lay_out_weights(const Model& model, const Job& job);

// NCHW or NHWC for a model that takes images, none otherwise
// (execution.data_layout).
std::optional<std::string> data_layout_name(const Model& model, torch::MemoryFormat layout);

}  // namespace ts::worker
