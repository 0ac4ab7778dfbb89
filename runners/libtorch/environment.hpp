#pragma once
// The context recorded with every result: host, CPU, memory, torch, CUDA and
// GPUs, threads, and the torchsweep build.
#include <nlohmann/json.hpp>

namespace ts::worker {

nlohmann::json capture_context();

}  // namespace ts::worker
