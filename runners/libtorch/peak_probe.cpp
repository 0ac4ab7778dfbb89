#include "runners/libtorch/peak_probe.hpp"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/environment.hpp"
#include "runners/libtorch/job.hpp"
#include "shared/log.hpp"

namespace ts::worker {
namespace {

double product_flops(int64_t n) { return 2.0 * static_cast<double>(n) * n * n; }

struct Figure {
  double flops_per_s = 0;
  int64_t size = 0;
};

// Best rate of repeated n x n products, `per_repetition` of them between two
// synchronisations (several on a GPU, so that launch latency does not
// count), with the second operand as is and transposed (what a Linear layer
// multiplies by): on a CPU the two layouts can take different kernels, an
// order of magnitude apart in bf16.
Figure best_rate(const torch::Device& device, torch::ScalarType dtype, int64_t n, int per_repetition,
                 double budget_seconds) {
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  auto c = torch::empty({n, n}, options);
  double best = 0;
  for (const auto& operand : {b, b.t()}) {
    torch::mm_out(c, a, operand);  // first call: kernel selection, allocation
    double spent = 0;
    for (int repetition = 0; repetition == 0 || spent < budget_seconds / 2; ++repetition) {
      const double seconds = synchronized_seconds(device, [&] {
        for (int i = 0; i < per_repetition; ++i) torch::mm_out(c, a, operand);
      });
      spent += seconds;
      best = std::max(best, per_repetition * product_flops(n) / seconds);
    }
  }
  return {best, n};
}

// On the CPU the size is fitted to the budget: a slow bf16 path (no native
// bf16 instructions) must not turn the probe into minutes.
Figure cpu_rate(torch::ScalarType dtype, const PeakProbeOptions& options) {
  const torch::Device cpu(torch::kCPU);
  const auto trial = best_rate(cpu, dtype, 256, 1, 0);
  const double affordable = trial.flops_per_s * options.seconds_per_figure / 4;  // FLOPs of one repetition
  const auto fitted = static_cast<int64_t>(std::cbrt(affordable / 2) / 64) * 64;
  const auto n = std::clamp<int64_t>(fitted, 256, options.largest_cpu_size);
  return best_rate(cpu, dtype, n, 1, options.seconds_per_figure);
}

// The figures of one device. fp32 is IEEE fp32 (TF32 off, whatever the
// process default); on a GPU `tf32` is fp32 with TensorFloat-32 allowed, the
// peak of an fp32 job that ran with it (job tf32, execution.math).
nlohmann::json figures(const std::function<Figure(torch::ScalarType)>& measure, bool gpu) {
  struct Policy {
    const char* name;
    torch::ScalarType dtype;
    bool tf32;
  };
  std::vector<Policy> policies{{"fp32", torch::kFloat, false}, {"bf16", torch::kBFloat16, false}};
  if (gpu) policies.push_back({"tf32", torch::kFloat, true});
  auto& context = at::globalContext();
  const bool process_tf32 = context.allowTF32CuBLAS();
  nlohmann::json entry{{"matmul_size", nlohmann::json::object()}};
  for (const auto& [name, dtype, tf32] : policies) {
    context.setAllowTF32CuBLAS(tf32);
    try {
      const auto figure = measure(dtype);
      entry[name] = figure.flops_per_s;
      entry["matmul_size"][name] = figure.size;
    } catch (const c10::Error& error) {
      // A device or build without that dtype's matmul: no peak to report.
      log::warn("peak probe: no {} matrix product here: {}", name, error.what_without_backtrace());
      entry[name] = nullptr;
    }
  }
  context.setAllowTF32CuBLAS(process_tf32);
  return entry;
}

}  // namespace

nlohmann::json probe_peak(const PeakProbeOptions& options) {
  torch::NoGradGuard no_grad;
  const auto threads = default_threads();
  torch::set_num_threads(static_cast<int>(threads));
  const auto context = capture_context();  // the CPU's model and the GPUs
  nlohmann::json devices = nlohmann::json::array();
  auto cpu = figures([&](torch::ScalarType dtype) { return cpu_rate(dtype, options); }, false);
  cpu["device"] = "cpu";
  cpu["name"] = context.at("cpu_model");
  cpu["threads"] = threads;
  devices.push_back(std::move(cpu));
  for (const auto& gpu : context.at("gpus")) {
    const auto index = gpu.at("index").get<int>();
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
    auto entry = figures(
        [&](torch::ScalarType dtype) {
          return best_rate(device, dtype, options.cuda_size, 10, options.seconds_per_figure);
        },
        true);
    entry["device"] = "cuda:" + std::to_string(index);
    entry["index"] = index;
    entry["name"] = gpu.at("name");
    devices.push_back(std::move(entry));
  }
  return {{"devices", devices}};
}

}  // namespace ts::worker
