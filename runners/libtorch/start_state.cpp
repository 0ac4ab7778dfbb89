#include "runners/libtorch/start_state.hpp"

#include <map>
#include <set>

#include "runners/libtorch/distributed/data_parallel.hpp"
#include "runners/libtorch/models/registry.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/tensors/safetensors.hpp"
#include "shared/version.hpp"

namespace ts::worker {
namespace {

const std::map<torch::ScalarType, std::string>& dtype_names() {
  static const std::map<torch::ScalarType, std::string> names{
      {torch::kFloat, "F32"}, {torch::kDouble, "F64"}, {torch::kHalf, "F16"}, {torch::kBFloat16, "BF16"},
      {torch::kLong, "I64"},  {torch::kInt, "I32"},    {torch::kByte, "U8"},  {torch::kBool, "BOOL"}};
  return names;
}

safetensors::Tensor to_record(const torch::Tensor& tensor) {
  const auto cpu = tensor.detach().to(torch::kCPU).contiguous();
  const auto found = dtype_names().find(cpu.scalar_type());
  if (found == dtype_names().end())
    throw std::runtime_error("no safetensors dtype for " + std::string(cpu.dtype().name()));
  return {found->second, cpu.sizes().vec(),
          std::string(static_cast<const char*>(cpu.data_ptr()), static_cast<std::size_t>(cpu.nbytes()))};
}

torch::Tensor to_tensor(const safetensors::Tensor& record, const std::string& name, const std::string& path) {
  for (const auto& [type, dtype] : dtype_names()) {
    if (dtype == record.dtype) {
      // from_blob borrows the bytes; the clone owns a copy.
      return torch::from_blob(const_cast<char*>(record.bytes.data()), record.shape, torch::TensorOptions(type)).clone();
    }
  }
  throw std::runtime_error(path + ": " + name + ": dtype " + record.dtype + " is not one the worker reads");
}

std::string shape_text(c10::IntArrayRef shape) { return c10::str(shape); }

std::map<std::string, std::string> metadata_of(const Job& job, const char* content) {
  return {{"content", content},
          {"model", job.model},
          {"seed", std::to_string(job.seed)},
          {"written_by", "torchsweep-worker " + std::string(version::number())}};
}

safetensors::File read_file(const std::string& field, const std::string& path) {
  try {
    return safetensors::read(path);
  } catch (const InvalidInput& error) {
    throw std::runtime_error(field + ": " + error.what());
  }
}

// The tensor `name` of the `field` file at `path`, or an error naming all three.
torch::Tensor tensor_named(const safetensors::File& file, const std::string& name, const std::string& field,
                           const std::string& path) {
  const auto found = file.tensors.find(name);
  if (found == file.tensors.end()) throw std::runtime_error(field + ": " + path + ": no tensor '" + name + "'");
  return to_tensor(found->second, name, path);
}

}  // namespace

void write_initial_weights(const Job& job, const std::string& path) {
  torch::manual_seed(static_cast<uint64_t>(job.seed));  // as Experiment builds it
  const auto model = find_model(job.model, job.model_root).build(job.model_config);
  safetensors::File file;
  file.metadata = metadata_of(job, "initial_weights");
  for (const auto& item : model.module->named_parameters()) file.tensors.emplace(item.key(), to_record(item.value()));
  for (const auto& item : model.module->named_buffers()) file.tensors.emplace(item.key(), to_record(item.value()));
  safetensors::write(path, file);
  log::info("wrote the initial weights of {} (seed {}): {} tensors to {}", job.model, job.seed, file.tensors.size(),
            path);
}

void write_reference_batch(const Job& job, const std::string& path) {
  const auto model = find_model(job.model, job.model_root).build(job.model_config);  // for its sample shape
  SyntheticData data(job.batch_size, model.sample_shape, model.num_classes, 1, rank_data_seed(job.seed, 0), torch::kCPU,
                     model.tokens);
  const auto& batch = data.peek();
  safetensors::File file;
  file.metadata = metadata_of(job, "reference_batch");
  file.tensors.emplace("inputs", to_record(batch.inputs));
  file.tensors.emplace("targets", to_record(batch.targets));
  safetensors::write(path, file);
  log::info("wrote a reference batch of {} for {} to {}", job.batch_size, job.model, path);
}

void load_initial_weights(torch::nn::Module& module, const std::string& path) {
  const auto file = read_file("initial_weights", path);
  std::set<std::string> unused;
  for (const auto& [name, tensor] : file.tensors) unused.insert(name);
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& target) {
    const auto source = tensor_named(file, name, "initial_weights", path);
    if (source.sizes() != target.sizes()) {
      throw std::runtime_error("initial_weights: " + path + ": " + name + " has shape " + shape_text(source.sizes()) +
                               ", the model's is " + shape_text(target.sizes()));
    }
    target.copy_(source);
    unused.erase(name);
  };
  for (auto& item : module.named_parameters()) load(item.key(), item.value());
  for (auto& item : module.named_buffers()) load(item.key(), item.value());
  if (!unused.empty()) {
    throw std::runtime_error("initial_weights: " + path + ": tensor '" + *unused.begin() + "' is not in the model (" +
                             std::to_string(unused.size()) + " left over)");
  }
}

Batch read_reference_batch(const std::string& path, int64_t batch_size, const Model& model,
                           const torch::Device& device) {
  const auto file = read_file("reference_batch", path);
  std::vector<int64_t> shape{batch_size};
  shape.insert(shape.end(), model.sample_shape.begin(), model.sample_shape.end());
  const std::vector<int64_t> target_shape = model.tokens ? shape : std::vector<int64_t>{batch_size};
  Batch batch{tensor_named(file, "inputs", "reference_batch", path).to(model.tokens ? torch::kLong : torch::kFloat),
              tensor_named(file, "targets", "reference_batch", path).to(torch::kLong)};
  if (batch.inputs.sizes() != c10::IntArrayRef(shape)) {
    throw std::runtime_error("reference_batch: " + path + ": inputs have shape " + shape_text(batch.inputs.sizes()) +
                             ", the job needs " + shape_text(shape) + " (batch_size and the model's sample shape)");
  }
  if (batch.targets.sizes() != c10::IntArrayRef(target_shape)) {
    throw std::runtime_error("reference_batch: " + path + ": targets have shape " + shape_text(batch.targets.sizes()) +
                             ", the job needs " + shape_text(target_shape));
  }
  const auto outside = [&](const torch::Tensor& indices) {
    return indices.min().item<int64_t>() < 0 || indices.max().item<int64_t>() >= model.num_classes;
  };
  if (outside(batch.targets) || (model.tokens && outside(batch.inputs))) {
    throw std::runtime_error("reference_batch: " + path + ": " + (model.tokens ? "token ids" : "targets") +
                             " must be " + (model.tokens ? "in [0, " : "class indices in [0, ") +
                             std::to_string(model.num_classes) + ")");
  }
  return {batch.inputs.to(device), batch.targets.to(device)};
}

}  // namespace ts::worker
