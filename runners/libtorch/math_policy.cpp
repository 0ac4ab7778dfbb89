#include "runners/libtorch/math_policy.hpp"

#include <ATen/Context.h>

namespace ts::worker {

nlohmann::json apply_math_policy(const Job& job) {
  auto& context = at::globalContext();
  if (job.tf32 != "framework") {
    context.setAllowTF32CuBLAS(job.tf32 == "on");
    context.setAllowTF32CuDNN(job.tf32 == "on");
  }
  if (job.cudnn_benchmark != "framework") context.setBenchmarkCuDNN(job.cudnn_benchmark == "on");
  return {{"tf32", job.tf32},
          {"cudnn_benchmark", job.cudnn_benchmark},
          {"tf32_matmul", context.allowTF32CuBLAS()},
          {"tf32_conv", context.allowTF32CuDNN()},
          {"conv_autotune", context.benchmarkCuDNN()}};
}

}  // namespace ts::worker
