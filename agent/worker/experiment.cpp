#include "agent/worker/experiment.hpp"

#include <c10/util/Exception.h>

#include <optional>

#include "agent/worker/device.hpp"
#include "agent/worker/environment.hpp"
#include "agent/worker/forward_path.hpp"
#include "agent/worker/fusion_observer.hpp"
#include "agent/worker/memory_probe.hpp"
#include "agent/worker/models/registry.hpp"
#include "agent/worker/synthetic_data.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/progress_file.hpp"
#include "shared/timestamp.hpp"

namespace ts::worker {
namespace {

std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Job& job, const std::vector<torch::Tensor>& params) {
  if (job.optimizer == "adamw") {
    return std::make_unique<torch::optim::AdamW>(params,
                                                 torch::optim::AdamWOptions(job.lr).weight_decay(job.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(job.lr).momentum(job.momentum).weight_decay(job.weight_decay));
}

// Everything built from the job for one mode; a fallback builds it anew from
// the same seed so eager starts from the same weights compiled did.
class Experiment {
 public:
  Experiment(const Job& job, torch::Device device, PrecisionPlan plan, Mode mode, const CaptureFunction& capture)
      : job_(job), device_(device), plan_(plan), mode_(mode), clock_(make_step_clock(device)) {
    torch::manual_seed(static_cast<uint64_t>(job.seed));
    model_ = find_model(job.model).build(job.model_config);
    model_.module->to(device);
    model_.module->train(job.task == Task::train);
    data_ = std::make_unique<SyntheticData>(job.batch_size, model_.sample_shape, model_.num_classes, job.data_batches,
                                            job.seed + 1, device);
    if (job.task == Task::train) optimizer_ = make_optimizer(job, model_.module->parameters());
    if (plan.loss_scaling) scaler_.emplace(device);
    if (mode == Mode::compiled) {
      enable_fusers();
      capture_seconds_ = synchronized_seconds(device_, [&] { path_ = capture(model_, data_->peek().inputs, plan_); });
    } else {
      path_ = make_eager_path(model_, plan_);
    }
  }

  // Warm-up iterations; the first one is also timed alone, and in compiled
  // mode the fused kernels are observed during the last one.
  void warm_up(TimingReport& timing, std::optional<FusionReport>& fusion) {
    timing.warmup_iterations = job_.warmup;
    timing.warmup_seconds = synchronized_seconds(device_, [&] {
      for (int64_t i = 0; i < job_.warmup; ++i) {
        const bool observe = mode_ == Mode::compiled && i == job_.warmup - 1;
        std::optional<FusionObserver> observer;
        if (observe) observer.emplace();
        if (i == 0) {
          timing.first_iteration_seconds = synchronized_seconds(device_, [&] { step(data_->next()); });
        } else {
          step(data_->next());
        }
        if (observe) fusion = observer->report();
      }
    });
  }

  void run_timed_epochs(TimingReport& timing, LossReport& loss, MemoryReport& memory) {
    MemoryProbe probe(device_);
    probe.begin();
    timing.iterations_per_epoch = job_.iters;
    ProgressFile progress;
    for (int64_t epoch = 0; epoch < job_.epochs; ++epoch) {
      clock_->begin_epoch();
      const Batch* batch = nullptr;
      torch::Tensor output;
      for (int64_t i = 0; i < job_.iters; ++i) {
        batch = &data_->next();
        clock_->begin_step();
        output = step(*batch);
        clock_->end_step();
      }
      auto times = clock_->end_epoch();
      timing.epoch_seconds.push_back(times.seconds);
      timing.step_seconds.push_back(std::move(times.step_seconds));
      loss.epoch_final.push_back(loss_value(output, *batch));
      progress.epoch_finished(epoch + 1, job_.epochs, timing.epoch_seconds.back());
    }
    memory = probe.end();
    timing.clock = clock_->name();
    loss.first_step = first_loss_;
  }

  std::optional<double> capture_seconds() const { return capture_seconds_; }
  std::string compiler() const { return path_->compiler(); }
  int64_t parameters() const { return count_parameters(*model_.module); }
  std::optional<LossScalingReport> loss_scaling() const {
    return scaler_ ? std::optional(scaler_->report()) : std::nullopt;
  }

 private:
  // One training or inference step. Returns the loss (train) or the logits
  // (infer); the loss of the very first step is remembered.
  torch::Tensor step(const Batch& batch) {
    torch::Tensor output;
    if (job_.task == Task::train) {
      optimizer_->zero_grad(/*set_to_none=*/true);
      auto loss = torch::nn::functional::cross_entropy(path_->forward(batch.inputs).to(torch::kFloat), batch.targets);
      if (scaler_) {
        scaler_->scale(loss).backward();
        scaler_->step(*optimizer_);
      } else {
        loss.backward();
        optimizer_->step();
      }
      output = loss.detach();
    } else {
      torch::NoGradGuard no_grad;
      output = path_->forward(batch.inputs);
    }
    if (!first_loss_) first_loss_ = loss_value(output, batch);
    return output;
  }

  std::optional<double> loss_value(const torch::Tensor& output, const Batch& batch) const {
    if (!output.defined()) return std::nullopt;
    if (job_.task == Task::train) return output.item<double>();
    torch::NoGradGuard no_grad;
    return torch::nn::functional::cross_entropy(output.to(torch::kFloat), batch.targets).item<double>();
  }

  const Job& job_;
  torch::Device device_;
  PrecisionPlan plan_;
  Mode mode_;
  std::unique_ptr<StepClock> clock_;
  Model model_;
  std::unique_ptr<DataSource> data_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::optional<LossScaler> scaler_;
  std::unique_ptr<ForwardPath> path_;
  std::optional<double> capture_seconds_;
  std::optional<double> first_loss_;
};

void configure_threads(const Job& job) {
  if (job.interop_threads > 0 && static_cast<int64_t>(at::get_num_interop_threads()) != job.interop_threads) {
    at::set_num_interop_threads(static_cast<int>(job.interop_threads));
  }
  at::set_num_threads(static_cast<int>(job.threads));
}

void add_observations(Result& result) {
  const auto& job = result.job;
  auto& timing = *result.timing;
  auto& execution = *result.execution;
  if (timing.noisy) {
    result.warnings.push_back(log::format("noisy measurement: step-time IQR/median is {} (above {})",
                                          timing.step_iqr_over_median, noisy_iqr_over_median));
  }
  if (job.warmup == 0) {
    result.warnings.push_back("warmup is 0: the first timed epoch includes compilation and allocator growth");
  }
  if (execution.mode == Mode::compiled && !execution.fusion) {
    result.warnings.push_back("no warm-up iteration to observe fusion in: fusion is not reported");
  } else if (execution.mode == Mode::compiled && execution.fusion->fused_kernels == 0) {
    result.warnings.push_back("compiled mode ran without any fused kernel (TorchScript interpreter only)");
  }
}

}  // namespace

Result run_experiment(const Job& job, const CaptureFunction& capture) {
  Result result;
  result.job = job;
  result.started_at = utc_timestamp();
  for (const auto& knob : job.ignored_knobs) {
    result.warnings.push_back("knob '" + knob + "' does not apply to model '" + job.model + "' and was ignored");
  }
  for (const auto& knob : job.torch_compile_knobs) {
    result.warnings.push_back("knob '" + knob + "' is read by the torch-compile runner only and was ignored");
  }
  try {
    configure_threads(job);
    if (job.gpus > 1) {
      throw Unsupported("gpus = " + std::to_string(job.gpus) +
                        ": multi-rank jobs are launched by the agent "
                        "under mpirun; a single worker process runs one rank");
    }
    const auto device = resolve_device(job.device);
    const auto plan = plan_precision(job.precision, device);

    ExecutionReport execution;
    execution.task = job.task;
    execution.precision = job.precision;
    execution.autocast_dtype = autocast_dtype_name(plan);
    execution.device = device.str();
    TimingReport timing;
    std::optional<Experiment> experiment;
    auto prepare = [&](Mode mode) {
      timing = TimingReport{};
      execution.fusion.reset();
      experiment.reset();
      experiment.emplace(job, device, plan, mode, capture);
      experiment->warm_up(timing, execution.fusion);
      execution.mode = mode;
    };
    if (job.mode == Mode::compiled) {
      try {
        prepare(Mode::compiled);
      } catch (const InvalidInput&) {
        throw;
      } catch (const std::exception& error) {
        const auto reason = "compiled mode failed: " + message_of(error);
        if (job.fallback == Fallback::none) throw std::runtime_error(reason);
        log::warn("{}; falling back to eager as the job allows", reason);
        execution.fallback_reason = reason;
        result.warnings.push_back(reason + "; ran eager instead (fallback: eager)");
        prepare(Mode::eager);
      }
    } else {
      prepare(Mode::eager);
    }
    LossReport loss;
    MemoryReport memory;
    experiment->run_timed_epochs(timing, loss, memory);
    summarize_timing(timing, job.batch_size, job.task);
    execution.compiler = experiment->compiler();
    execution.capture_seconds = experiment->capture_seconds();
    execution.loss_scaling = experiment->loss_scaling();
    execution.model_parameters = experiment->parameters();
    result.execution = execution;
    result.timing = std::move(timing);
    result.loss = std::move(loss);
    result.memory = memory;
    add_observations(result);
    result.status = Status::ok;
  } catch (const InvalidInput&) {
    throw;
  } catch (const Unsupported& error) {
    result.status = Status::unsupported;
    result.error = error.what();
  } catch (const std::exception& error) {
    result.status = Status::failed;
    result.error = message_of(error);
  }
  if (result.error) log::error("job failed: {}", *result.error);
  result.context = capture_context();
  result.finished_at = utc_timestamp();
  return result;
}

}  // namespace ts::worker
