#pragma once
// Data-parallel gradient averaging as PyTorch's DistributedDataParallel does
// it: parameters are packed, in reverse registration order (about the order
// backward produces their gradients), into flat buckets of about
// `bucket_bytes`. With overlap on, an autograd hook copies each gradient
// into its bucket and a full bucket's all-reduce starts while backward is
// still running; with overlap off every bucket is reduced after backward.
// Buckets always start in index order, so every rank issues the same
// collectives in the same order, and both settings reduce the same buffers
// with the same calls: they give bitwise the same gradients.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "runners/libtorch/device.hpp"
#include "runners/libtorch/distributed/collective.hpp"

namespace ts::worker {

struct ReducerOptions {
  int64_t bucket_bytes = 25 * 1024 * 1024;
  bool overlap = true;
  // Steps between two collect_timings() (an epoch's): the CUDA events that
  // time them are made up front.
  int64_t steps_per_epoch = 1;
};

// What the reducer did over the steps since the last take_statistics().
struct ReducerStatistics {
  int64_t all_reduces = 0;
  int64_t bytes = 0;                    // all-reduced, summed over all-reduces
  double all_reduce_seconds = 0;        // summed durations of the all-reduces
  std::vector<double> exposed_seconds;  // per step: backward done to gradients averaged
};

class GradientReducer {
 public:
  GradientReducer(const std::vector<torch::Tensor>& parameters, Collective& collective, ReducerOptions options,
                  torch::Device device);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // After backward: starts the buckets not yet started, waits for all, and
  // leaves each parameter's .grad averaged over the ranks.
  void finish();
  // Resolves the timings of the steps finished so far; call with the
  // device synchronised (the step clock does at each epoch's end).
  void collect_timings();
  // Waits, watching the collective, for the all-reduces in flight (Collective::settle).
  void settle() { collective_.settle(); }
  ReducerStatistics take_statistics();

  int64_t bucket_count() const noexcept { return static_cast<int64_t>(buckets_.size()); }
  int64_t gradient_bytes() const noexcept { return gradient_bytes_; }

 private:
  struct Slot {
    torch::Tensor parameter;
    std::size_t bucket = 0;
    int64_t offset = 0;  // in elements, within the bucket
    bool ready = false;
  };
  struct Bucket {
    torch::Tensor flat;
    std::vector<std::size_t> slots;
    std::size_t waiting = 0;  // gradients still to come this step
    std::unique_ptr<PendingCollective> pending;
  };

  void gradient_ready(std::size_t slot, const torch::Tensor& gradient);
  void start_ready_buckets();

  Collective& collective_;
  ReducerOptions options_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<unsigned> hooks_;  // one per slot when overlapping
  std::size_t next_bucket_ = 0;  // the first bucket not started this step
  int64_t gradient_bytes_ = 0;
  std::unique_ptr<IntervalTimer> exposed_timer_;
  ReducerStatistics statistics_;
};

}  // namespace ts::worker
