#pragma once
// One experiment, run the way docs/methodology.md describes: build the model
// and data from the seed, capture (compiled mode), warm up, then time the
// epochs; report what actually ran. Multi-rank jobs run the same code on
// every rank, with gradients averaged by a GradientReducer
// (docs/multi-gpu.md).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "runners/libtorch/data/image_folder.hpp"
#include "runners/libtorch/data/synthetic_data.hpp"
#include "runners/libtorch/device.hpp"
#include "runners/libtorch/distributed/data_parallel.hpp"
#include "runners/libtorch/forward_path.hpp"
#include "runners/libtorch/job.hpp"
#include "runners/libtorch/memory_probe.hpp"
#include "runners/libtorch/result.hpp"

namespace ts::worker {

using CaptureFunction = std::function<std::unique_ptr<ForwardPath>(Model&, const torch::Tensor&, const PrecisionPlan&)>;

// Everything built from the job for one mode; a fallback builds it anew from
// the same seed so eager starts from the same weights compiled did. With
// `parallel`, rank 0's initial state is broadcast, each rank draws its own
// data shard, and each training step averages gradients over the ranks.
class Experiment {
 public:
  Experiment(const Job& job, torch::Device device, PrecisionPlan plan, Mode mode, const CaptureFunction& capture,
             const DataParallel* parallel = nullptr);
  ~Experiment();
  Experiment(const Experiment&) = delete;
  Experiment& operator=(const Experiment&) = delete;

  // Warm-up iterations; the first one is also timed alone, and in compiled
  // mode the fused kernels are observed during the last one.
  void warm_up(TimingReport& timing, std::optional<FusionReport>& fusion);
  // `probe` was created before the model: it resets its counters here.
  void run_timed_epochs(TimingReport& timing, LossReport& loss, MemoryProbe& probe, MemoryReport& memory);
  // One more step on the next batch, outside every figure: a profiled step
  // (docs/explain.md). Data-parallel: every rank takes it, all-reduces included.
  void extra_step();
  // The accuracy gate's runs after the timed epochs (docs/compiler.md): one
  // step compiled, eager and in float64 from the weights the epochs left,
  // on one batch; the weights, buffers and gradients are put back after.
  nlohmann::json accuracy_check();

  std::optional<double> capture_seconds() const { return capture_seconds_; }
  std::string compiler() const { return path_->compiler(); }
  int64_t parameters() const;
  // NCHW or NHWC for an image model (job memory_format), none otherwise.
  std::optional<std::string> data_layout() const;
  // Sum of |w| over the trainable parameters as built (float64): the same
  // seed must give every runner the same figure (docs/runners.md).
  double initial_parameter_l1() const { return initial_parameter_l1_; }
  // Data-parallel: this rank's own step times (the timing report holds the
  // slowest rank's).
  const std::vector<std::vector<double>>& own_step_seconds() const { return own_step_seconds_; }
  std::optional<LossScalingReport> loss_scaling() const;
  // imagefolder jobs: the input pipeline's report of the timed epochs.
  const std::optional<DataReport>& data_report() const { return data_report_; }
  torch::nn::Module& module() { return *model_.module; }
  // The gradient reducer's record of the timed steps (multi-rank training).
  std::optional<ReducerStatistics> timed_reduction() const { return timed_reduction_; }
  const GradientReducer* reducer() const { return reducer_.get(); }

 private:
  torch::Tensor step(const Batch& batch);
  // The loss of a step's output (the loss itself when training), left on
  // the device: reading it is a host sync, which must not fall in a timed step.
  torch::Tensor loss_of(const torch::Tensor& output, const torch::Tensor& targets) const;
  std::optional<double> loss_value(const torch::Tensor& output, const Batch& batch) const;
  double evaluate(const Batch& batch);

  const Job& job_;
  torch::Device device_;
  PrecisionPlan plan_;
  Mode mode_;
  const DataParallel* parallel_;
  std::unique_ptr<StepClock> clock_;
  Model model_;
  std::optional<ImageTree> tree_;  // imagefolder jobs; before data_, which reads it
  std::unique_ptr<DataSource> data_;
  std::optional<DataReport> data_report_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::optional<LossScaler> scaler_;
  std::unique_ptr<ForwardPath> path_;
  std::unique_ptr<GradientReducer> reducer_;  // after model_: its hooks go first
  std::optional<double> capture_seconds_;
  double initial_parameter_l1_ = 0;
  std::vector<std::vector<double>> own_step_seconds_;
  std::optional<Batch> reference_;  // the job's reference batch, if it names one
  // The layout of the model's 4-D weights and of its input batches.
  torch::MemoryFormat layout_ = torch::MemoryFormat::Contiguous;
  // The outputs and targets of the first two steps, kept as they are (with
  // warm-up 0 or 1 those steps are timed ones): their losses are computed
  // and read after the timed epochs, so that no extra kernel or host wait
  // lands in a timed step. Undefined output: the step had none.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> early_steps_;
  std::optional<double> reference_eval_;
  std::optional<ReducerStatistics> timed_reduction_;
};

// Runs `job` and always returns a result: status ok, or failed/unsupported
// with the reason. Only a job whose content is invalid throws
// ts::InvalidInput (e.g. heads that do not divide width). `world` is given
// when mpirun started this process (every rank calls this; rank 0's result
// is the job's), or for a one-rank job with data_parallel: always. `capture`
// is how compiled mode captures the model (replaceable to exercise the fallback).
// A profile's trace is written in `beside_result`, the result's folder.
Result run_experiment(const Job& job, const World* world = nullptr,
                      const CaptureFunction& capture = capture_torchscript,
                      const std::filesystem::path& beside_result = ".");

}  // namespace ts::worker
