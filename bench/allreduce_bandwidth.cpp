// All-reduce bandwidth of the worker's collectives, measured the way
// nccl-tests' all_reduce_perf does: for each message size, a few warm-up
// all-reduces, then timed ones; algorithm bandwidth = bytes / time per
// all-reduce, bus bandwidth = that x 2(n-1)/n. Run under mpirun:
//
//   mpirun -np N bench_allreduce_bandwidth [cpu|cuda] [max_mib] [iterations]
//
// Rank 0 prints one row per size (float32 elements, in place, summed). On
// cuda each rank takes the GPU of its local rank and NCCL reduces; on cpu,
// MPI. The sizes double from 4 KiB to max_mib (default 64).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/distributed/data_parallel.hpp"
#include "runners/libtorch/distributed/mpi_world.hpp"

namespace {

using namespace ts::worker;

double seconds_per_all_reduce(Collective& collective, const torch::Tensor& buffer, const torch::Device& device,
                              int iterations) {
  for (int i = 0; i < 5; ++i) collective.start_all_reduce_sum(buffer)->wait();
  synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) collective.start_all_reduce_sum(buffer)->wait();
  synchronize(device);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  collective.take_all_reduce_seconds();
  return elapsed / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string device_kind = argc > 1 ? argv[1] : "cpu";
  const int64_t max_bytes = (argc > 2 ? std::atoll(argv[2]) : 64) << 20;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 20;
  MpiWorld world;
  const auto device = resolve_device(device_kind == "cuda" ? "cuda:" + std::to_string(world.local_rank()) : device_kind,
                                     *cuda_devices());
  auto collective = make_collective(world, device);
  const double n = world.size();
  if (world.rank() == 0) {
    std::printf("# %s all-reduce (sum, float32, in place), %d rank(s), %d iterations per size\n",
                collective->backend().c_str(), world.size(), iterations);
    std::printf("%12s %14s %14s %14s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s");
  }
  for (int64_t bytes = 4096; bytes <= max_bytes; bytes *= 2) {
    const auto buffer = torch::ones({bytes / 4}, torch::TensorOptions().dtype(torch::kFloat).device(device));
    const double seconds = seconds_per_all_reduce(*collective, buffer, device, iterations);
    const double algorithm = static_cast<double>(bytes) / seconds / 1e9;
    if (world.rank() == 0) {
      std::printf("%12lld %14.1f %14.3f %14.3f\n", static_cast<long long>(bytes), seconds * 1e6, algorithm,
                  algorithm * 2.0 * (n - 1.0) / n);
    }
  }
  return 0;
}
