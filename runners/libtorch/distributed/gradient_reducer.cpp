#include "runners/libtorch/distributed/gradient_reducer.hpp"

#include <utility>

namespace ts::worker {

GradientReducer::GradientReducer(const std::vector<torch::Tensor>& parameters, Collective& collective,
                                 ReducerOptions options, torch::Device device)
    : collective_(collective),
      options_(options),
      exposed_timer_(make_interval_timer(device, static_cast<std::size_t>(options.steps_per_epoch))) {
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->requires_grad()) continue;
    const auto bytes = static_cast<int64_t>(it->nbytes());
    const bool fits = !buckets_.empty() && buckets_.back().flat.numel() > 0 &&
                      buckets_.back().flat.scalar_type() == it->scalar_type() &&
                      static_cast<int64_t>(buckets_.back().flat.nbytes()) + bytes <= options_.bucket_bytes;
    if (!fits) buckets_.push_back(Bucket{torch::empty({0}, it->options().requires_grad(false)), {}, 0, nullptr});
    auto& bucket = buckets_.back();
    slots_.push_back(Slot{*it, buckets_.size() - 1, bucket.flat.numel(), false});
    bucket.slots.push_back(slots_.size() - 1);
    bucket.flat = torch::empty({bucket.flat.numel() + it->numel()}, bucket.flat.options());
    gradient_bytes_ += bytes;
  }
  for (auto& bucket : buckets_) bucket.waiting = bucket.slots.size();
  collective_.expect_all_reduces(buckets_.size() * static_cast<std::size_t>(options_.steps_per_epoch));
  if (!options_.overlap) return;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    hooks_.push_back(slots_[slot].parameter.register_hook(
        [this, slot](const torch::Tensor& gradient) { gradient_ready(slot, gradient); }));
  }
}

GradientReducer::~GradientReducer() {
  // An all-reduce still in flight (backward threw) owns its bucket's buffer;
  // the other ranks complete it when they reach the same bucket.
  for (std::size_t slot = 0; slot < hooks_.size(); ++slot) slots_[slot].parameter.remove_hook(hooks_[slot]);
  for (auto& bucket : buckets_) {
    if (bucket.pending) bucket.pending->wait();
  }
}

// Runs in backward (LibTorch's autograd thread on CUDA, the calling thread
// on CPU), once per parameter with its whole gradient.
void GradientReducer::gradient_ready(std::size_t slot, const torch::Tensor& gradient) {
  auto& entry = slots_[slot];
  if (entry.ready) return;
  auto& bucket = buckets_[entry.bucket];
  torch::NoGradGuard no_grad;
  bucket.flat.narrow(0, entry.offset, entry.parameter.numel()).copy_(gradient.reshape(-1));
  entry.ready = true;
  if (--bucket.waiting == 0) start_ready_buckets();
}

void GradientReducer::start_ready_buckets() {
  for (std::size_t i = 0; i < next_bucket_; ++i) {
    if (buckets_[i].pending) buckets_[i].pending->poll();
  }
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].waiting == 0) {
    auto& bucket = buckets_[next_bucket_++];
    bucket.pending = collective_.start_all_reduce_sum(bucket.flat);
    statistics_.bytes += static_cast<int64_t>(bucket.flat.nbytes());
    ++statistics_.all_reduces;
  }
}

void GradientReducer::finish() {
  torch::NoGradGuard no_grad;
  exposed_timer_->begin();
  // Gradients no hook delivered: all of them with overlap off; with it on,
  // those of parameters this step did not use (reduced as zeros).
  for (auto& slot : slots_) {
    if (slot.ready) continue;
    auto view = buckets_[slot.bucket].flat.narrow(0, slot.offset, slot.parameter.numel());
    const auto& gradient = slot.parameter.grad();
    if (gradient.defined()) {
      view.copy_(gradient.reshape(-1));
    } else {
      view.zero_();
    }
    slot.ready = true;
    --buckets_[slot.bucket].waiting;
    if (!options_.overlap) start_ready_buckets();
  }
  start_ready_buckets();
  const double scale = 1.0 / collective_.size();
  for (auto& bucket : buckets_) {
    bucket.pending->wait();
    bucket.pending.reset();
    bucket.flat.mul_(scale);
    for (const auto index : bucket.slots) {
      auto& slot = slots_[index];
      auto gradient = slot.parameter.mutable_grad();
      if (gradient.defined())
        gradient.copy_(bucket.flat.narrow(0, slot.offset, slot.parameter.numel()).view_as(gradient));
      slot.ready = false;
    }
    bucket.waiting = bucket.slots.size();
  }
  next_bucket_ = 0;
  exposed_timer_->end();
}

void GradientReducer::collect_timings() {
  for (const auto seconds : collective_.take_all_reduce_seconds()) statistics_.all_reduce_seconds += seconds;
  for (const auto seconds : exposed_timer_->take()) statistics_.exposed_seconds.push_back(seconds);
}

ReducerStatistics GradientReducer::take_statistics() {
  collect_timings();
  return std::exchange(statistics_, {});
}

}  // namespace ts::worker
