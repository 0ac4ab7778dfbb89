#include "runners/libtorch/peak_probe.hpp"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/environment.hpp"
#include "runners/libtorch/job.hpp"
#include "shared/log.hpp"

namespace ts::worker {
namespace {

struct Figure {
  double flops_per_s = 0;
  std::string kernel;  // what reached it: "matmul n=1024", "conv3x3 n=4 c=64 28x28"
};

// One candidate kernel: its FLOPs a call and the call.
struct Kernel {
  std::string name;
  double flops = 0;
  std::function<void()> run;
};

// An n x n matrix product, with the second operand as is or transposed
// (what a Linear layer multiplies by): on a CPU the two layouts can take
// different kernels, an order of magnitude apart in bf16.
std::vector<Kernel> matmuls(const torch::TensorOptions& options, int64_t n) {
  const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  auto c = torch::empty({n, n}, options);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const auto name = fmt::format("matmul n={}", n);
  return {{name, flops, [a, b, c]() mutable { torch::mm_out(c, a, b); }},
          {name + " transposed", flops, [a, bt = b.t(), c]() mutable { torch::mm_out(c, a, bt); }}};
}

// A 3x3 convolution, stride 1, as a ResNet's blocks run them (through
// oneDNN on a CPU, cuDNN on a GPU, as the runners' are): a model made of
// them can reach a rate no matrix product of the probe reaches.
Kernel convolution(const torch::TensorOptions& options, int64_t batch, int64_t channels, int64_t side) {
  const auto input = torch::randn({batch, channels, side, side}, options);
  const auto weight = torch::randn({channels, channels, 3, 3}, options);
  const double flops = 2.0 * static_cast<double>(batch * channels * side * side) * static_cast<double>(channels * 9);
  return {fmt::format("conv3x3 n={} c={} {}x{}", batch, channels, side, side), flops, [input, weight] {
            at::conv2d(input, weight, {}, /*stride=*/{1, 1}, /*padding=*/{1, 1});
          }};
}

// Best rate of the kernels, each called `per_repetition` times between two
// synchronisations (several on a GPU, so that launch latency does not
// count), each given an equal share of the budget.
Figure best_rate(const torch::Device& device, const std::vector<Kernel>& kernels, int per_repetition,
                 double budget_seconds) {
  Figure best;
  const double share = budget_seconds / static_cast<double>(kernels.size());
  for (const auto& kernel : kernels) {
    kernel.run();  // first call: kernel selection, allocation
    double spent = 0;
    for (int repetition = 0; repetition == 0 || spent < share; ++repetition) {
      const double seconds = synchronized_seconds(device, [&] {
        for (int i = 0; i < per_repetition; ++i) kernel.run();
      });
      spent += seconds;
      const double rate = per_repetition * kernel.flops / seconds;
      if (rate > best.flops_per_s) best = {rate, kernel.name};
    }
  }
  return best;
}

// On the CPU the sizes are fitted to the budget: a slow bf16 path (no
// native bf16 instructions) must not turn the probe into minutes.
Figure cpu_rate(torch::ScalarType dtype, const PeakProbeOptions& options) {
  const torch::Device cpu(torch::kCPU);
  const auto tensors = torch::TensorOptions().dtype(dtype);
  const auto trial = best_rate(cpu, matmuls(tensors, 256), 1, 0);
  const double affordable = trial.flops_per_s * options.seconds_per_figure / 8;  // FLOPs of one repetition
  const auto fitted = static_cast<int64_t>(std::cbrt(affordable / 2) / 64) * 64;
  std::vector<Kernel> kernels;
  std::vector<int64_t> sizes{256};
  for (const auto n : {fitted / 2 / 64 * 64, fitted}) {
    const auto size = std::clamp<int64_t>(n, 256, options.largest_cpu_size);
    if (size != sizes.back()) sizes.push_back(size);
  }
  for (const auto n : sizes) {
    auto pair = matmuls(tensors, n);
    kernels.insert(kernels.end(), pair.begin(), pair.end());
  }
  // Early and late ResNet stages, their batch fitted to what one repetition affords.
  for (const auto& [channels, side] : {std::pair<int64_t, int64_t>{64, 28}, {256, 14}}) {
    const double per_sample = 2.0 * static_cast<double>(channels * side * side) * static_cast<double>(channels * 9);
    const auto batch = std::clamp<int64_t>(static_cast<int64_t>(affordable / per_sample), 1, 8);
    kernels.push_back(convolution(tensors, batch, channels, side));
  }
  return best_rate(cpu, kernels, 1, options.seconds_per_figure);
}

Figure gpu_rate(const torch::Device& device, torch::ScalarType dtype, const PeakProbeOptions& options) {
  const auto tensors = torch::TensorOptions().dtype(dtype).device(device);
  auto kernels = matmuls(tensors, options.cuda_size / 2);
  auto largest = matmuls(tensors, options.cuda_size);
  kernels.insert(kernels.end(), largest.begin(), largest.end());
  kernels.push_back(convolution(tensors, 64, 256, 56));
  return best_rate(device, kernels, 10, options.seconds_per_figure);
}

// The figures of one device. fp32 is IEEE fp32 (TF32 off for products and
// convolutions, whatever the process default); on a GPU `tf32` is fp32 with
// TensorFloat-32 allowed for both, the peak of an fp32 job that ran with
// either (job tf32, execution.math).
nlohmann::json figures(const std::function<Figure(torch::ScalarType)>& measure, bool gpu) {
  struct Policy {
    const char* name;
    torch::ScalarType dtype;
    bool tf32;
  };
  std::vector<Policy> policies{{"fp32", torch::kFloat, false}, {"bf16", torch::kBFloat16, false}};
  if (gpu) policies.push_back({"tf32", torch::kFloat, true});
  auto& context = at::globalContext();
  const bool process_tf32_matmul = context.allowTF32CuBLAS();
  const bool process_tf32_conv = context.allowTF32CuDNN();
  nlohmann::json entry{{"kernels", nlohmann::json::object()}};
  for (const auto& [name, dtype, tf32] : policies) {
    context.setAllowTF32CuBLAS(tf32);
    context.setAllowTF32CuDNN(tf32);
    try {
      const auto figure = measure(dtype);
      entry[name] = figure.flops_per_s;
      entry["kernels"][name] = figure.kernel;
    } catch (const c10::Error& error) {
      // A device or build without that dtype's kernels: no peak to report.
      log::warn("peak probe: no {} products here: {}", name, error.what_without_backtrace());
      entry[name] = nullptr;
    }
  }
  context.setAllowTF32CuBLAS(process_tf32_matmul);
  context.setAllowTF32CuDNN(process_tf32_conv);
  return entry;
}

}  // namespace

nlohmann::json probe_peak(const PeakProbeOptions& options) {
  torch::NoGradGuard no_grad;
  const auto threads = default_threads();
  const auto context = capture_context();  // the CPU's model and the GPUs
  nlohmann::json devices = nlohmann::json::array();
  // The CPU at the default thread count and at one (a job's threads decide
  // which peak it is measured against).
  for (const auto count : threads > 1 ? std::vector<int64_t>{threads, 1} : std::vector<int64_t>{1}) {
    torch::set_num_threads(static_cast<int>(count));
    auto cpu = figures([&](torch::ScalarType dtype) { return cpu_rate(dtype, options); }, false);
    cpu["device"] = "cpu";
    cpu["name"] = context.at("cpu_model");
    cpu["threads"] = count;
    devices.push_back(std::move(cpu));
  }
  torch::set_num_threads(static_cast<int>(threads));
  for (const auto& gpu : context.at("gpus")) {
    const auto index = gpu.at("index").get<int>();
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
    auto entry = figures([&](torch::ScalarType dtype) { return gpu_rate(device, dtype, options); }, true);
    entry["device"] = "cuda:" + std::to_string(index);
    entry["index"] = index;
    entry["name"] = gpu.at("name");
    devices.push_back(std::move(entry));
  }
  return {{"devices", devices}};
}

}  // namespace ts::worker
