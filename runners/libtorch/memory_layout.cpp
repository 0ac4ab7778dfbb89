#include "runners/libtorch/memory_layout.hpp"

#include "runners/libtorch/device.hpp"

namespace ts::worker {
namespace {

bool takes_images(const Model& model) { return !model.tokens && model.sample_shape.size() == 3; }

}  // namespace

torch::MemoryFormat memory_format_of(const Job& job) {
  return job.memory_format == "channels_last" ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
}

torch::MemoryFormat lay_out_weights(const Model& model, const Job& job) {
  const auto layout = memory_format_of(job);
  if (layout == torch::MemoryFormat::Contiguous) return layout;
  if (!takes_images(model)) throw Unsupported("memory_format channels_last: model " + job.model + " takes no images");
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.module->parameters()) {
    if (parameter.dim() == 4) parameter.set_data(parameter.data().contiguous(layout));
  }
  return layout;
}

std::optional<std::string> data_layout_name(const Model& model, torch::MemoryFormat layout) {
  if (!takes_images(model)) return std::nullopt;
  return layout == torch::MemoryFormat::ChannelsLast ? "NHWC" : "NCHW";
}

}  // namespace ts::worker
