#include "runners/libtorch/experiment.hpp"

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "runners/libtorch/accuracy_check.hpp"
#include "runners/libtorch/data/jpeg_image.hpp"
#include "runners/libtorch/data/synthetic_data.hpp"
#include "runners/libtorch/device.hpp"
#include "runners/libtorch/distributed/module_state.hpp"
#include "runners/libtorch/environment.hpp"
#include "runners/libtorch/forward_path.hpp"
#include "runners/libtorch/fusion_observer.hpp"
#include "runners/libtorch/generation.hpp"
#include "runners/libtorch/math_policy.hpp"
#include "runners/libtorch/memory_layout.hpp"
#include "runners/libtorch/memory_probe.hpp"
#include "runners/libtorch/models/registry.hpp"
#include "runners/libtorch/profiler.hpp"
#include "runners/libtorch/start_state.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/progress_file.hpp"
#include "shared/statistics.hpp"
#include "shared/timestamp.hpp"

namespace ts::worker {
namespace {

// Cross-entropy in fp32 against class indices; over every position of a
// language model's [batch, seq, vocab] logits.
torch::Tensor class_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  // fp32 at least: the accuracy gate's float64 reference keeps its width.
  const auto scores = logits.scalar_type() == torch::kDouble ? logits : logits.to(torch::kFloat);
  if (scores.dim() == 3) return torch::nn::functional::cross_entropy(scores.flatten(0, 1), targets.flatten());
  return torch::nn::functional::cross_entropy(scores, targets);
}

// Every parameter, then every buffer: the module's whole state.
std::vector<torch::Tensor> module_state(const torch::nn::Module& module) {
  auto state = module.parameters();
  for (const auto& buffer : module.buffers()) state.push_back(buffer);
  return state;
}

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

// Every rank shuffles alike (the seed of rank 0) and takes its own share.
LoaderOptions loader_options(const Job& job, int rank, int ranks) {
  LoaderOptions options;
  options.batch_size = job.batch_size;
  options.side = job.model_config.input_size;
  options.workers = job.data->loader_workers;
  options.prefetch = job.data->prefetch;
  options.fail_on_corrupt = job.data->fail_on_corrupt;
  options.seed = static_cast<uint64_t>(rank_data_seed(job.seed, 0));
  options.rank = rank;
  options.ranks = ranks;
  options.layout = memory_format_of(job);
  return options;
}

// The loader alone, without training: a fresh one over the same tree, its
// first batch (the threads starting, the queue filling) not timed.
void loader_pass(const ImageTree& tree, const Job& job, DataReport& report) {
  ImageFolderData fresh(tree, loader_options(job, 0, 1), torch::kCPU);
  fresh.next_on_host();
  const int64_t batches = std::max<int64_t>(2, job.iters);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < batches; ++i) fresh.next_on_host();
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  report.loader_pass_images = batches * job.batch_size;
  report.loader_images_per_second = static_cast<double>(report.loader_pass_images) / seconds.count();
}

}  // namespace

Experiment::Experiment(const Job& job, torch::Device device, PrecisionPlan plan, Mode mode,
                       const CaptureFunction& capture, const DataParallel* parallel)
    : job_(job),
      device_(device),
      plan_(plan),
      mode_(mode),
      parallel_(parallel),
      clock_(make_step_clock(device, job.iters)) {
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  model_ = find_model(job.model, job.model_root).build(job.model_config);
  if (job.initial_weights) load_initial_weights(*model_.module, *job.initial_weights);
  model_.module->to(device);
  layout_ = lay_out_weights(model_, job);  // the inputs follow below
  model_.module->train(job.task == Task::train);
  if (parallel) broadcast_tensors(module_state(*model_.module), parallel->collective, 0);
  for (const auto& parameter : model_.module->parameters()) {
    initial_parameter_l1_ += parameter.detach().to(torch::kFloat64).abs().sum().item<double>();
  }
  const int rank = parallel ? parallel->world.rank() : 0;
  if (job.data) {
    require_jpeg_decoding();
    tree_ = ImageTree::read(job.data->path);
    if (static_cast<int64_t>(tree_->classes.size()) > model_.num_classes) {
      throw std::runtime_error(fmt::format("data.folder: {} has {} classes, more than the model's num_classes ({})",
                                           job.data->path, tree_->classes.size(), model_.num_classes));
    }
    data_ = std::make_unique<ImageFolderData>(*tree_, loader_options(job, rank, parallel ? parallel->world.size() : 1),
                                              device);
  } else {
    data_ = std::make_unique<SyntheticData>(job.batch_size, model_.sample_shape, model_.num_classes, job.data_batches,
                                            rank_data_seed(job.seed, rank), device, model_.tokens, layout_);
  }
  if (job.reference_batch) {
    reference_ = read_reference_batch(*job.reference_batch, job.batch_size, model_, device);
    if (!model_.tokens) reference_->inputs = reference_->inputs.contiguous(layout_);
  }
  if (job.task == Task::train) {
    optimizer_ = make_optimizer(job, model_.module->parameters());
    if (parallel) {
      reducer_ = std::make_unique<GradientReducer>(model_.module->parameters(), parallel->collective, parallel->reducer,
                                                   device);
    }
  }
  if (plan.loss_scaling) scaler_.emplace(device, job.loss_scale_initial, job.loss_scale_growth_interval);
  if (mode == Mode::compiled) {
    enable_fusers();
    capture_seconds_ = synchronized_seconds(device_, [&] { path_ = capture(model_, data_->peek().inputs, plan_); });
  } else {
    path_ = make_eager_path(model_, plan_);
  }
}

Experiment::~Experiment() = default;

void Experiment::warm_up(TimingReport& timing, std::optional<FusionReport>& fusion) {
  timing.warmup_iterations = job_.warmup;
  // Compilation never falls in the timed epochs: with warmup 0 the first
  // iteration still runs untimed (reported as first_iteration_seconds). A
  // reference batch takes the first two iterations of a training job.
  const int64_t reference_steps = reference_ ? (job_.task == Task::train ? 2 : 1) : 0;
  const int64_t iterations = std::max({int64_t{1}, job_.warmup, reference_steps});
  timing.warmup_seconds = synchronized_seconds(device_, [&] {
    for (int64_t i = 0; i < iterations; ++i) {
      const bool observe = mode_ == Mode::compiled && i == iterations - 1;
      std::optional<FusionObserver> observer;
      if (observe) observer.emplace();
      const Batch& batch = i < reference_steps ? *reference_ : data_->next();
      if (i == 0) {
        timing.first_iteration_seconds = synchronized_seconds(device_, [&] { step(batch); });
      } else {
        step(batch);
      }
      if (i + 1 == reference_steps && job_.task == Task::train) reference_eval_ = evaluate(*reference_);
      if (observe) fusion = observer->report();
    }
    if (reducer_) reducer_->settle();
  });
}

void Experiment::run_timed_epochs(TimingReport& timing, LossReport& loss, MemoryProbe& probe, MemoryReport& memory) {
  if (reducer_) reducer_->take_statistics();  // the warm-up's, dropped
  probe.begin_timed_phase();
  if (parallel_) {
    // The ranks start the timed epochs together: their skew stays out of
    // the first epoch and of the bus bandwidth (nccl-tests does the same).
    synchronize(device_);
    parallel_->world.barrier();
  }
  timing.iterations_per_epoch = job_.iters;
  std::optional<ProgressFile> progress;  // rank 0 speaks for the job
  if (!parallel_ || parallel_->world.rank() == 0) progress.emplace();
  std::vector<double> stall_seconds;  // the waits for the next batch, on the epoch clock
  for (int64_t epoch = 0; epoch < job_.epochs; ++epoch) {
    clock_->begin_epoch();
    const Batch* batch = nullptr;
    torch::Tensor output;
    std::chrono::duration<double> stall{0};
    for (int64_t i = 0; i < job_.iters; ++i) {
      const auto waited = std::chrono::steady_clock::now();
      batch = &data_->next();
      stall += std::chrono::steady_clock::now() - waited;
      clock_->begin_step();
      output = step(*batch);
      clock_->end_step();
    }
    if (reducer_) reducer_->settle();  // a hung all-reduce fails here, not in the clock's synchronisation
    auto times = clock_->end_epoch();
    if (reducer_) reducer_->collect_timings();
    timing.epoch_seconds.push_back(times.seconds);
    timing.step_seconds.push_back(std::move(times.step_seconds));
    loss.epoch_final.push_back(loss_value(output, *batch));
    stall_seconds.push_back(stall.count());
    if (progress) progress->epoch_finished(epoch + 1, job_.epochs, timing.epoch_seconds.back());
  }
  memory = probe.end();
  if (tree_) {
    const auto& loader = dynamic_cast<const ImageFolderData&>(*data_);
    DataReport report;
    report.folder = job_.data->path;
    report.loader = loader.name();
    report.images = static_cast<int64_t>(tree_->samples.size());
    report.classes = static_cast<int64_t>(tree_->classes.size());
    report.workers = job_.data->loader_workers;
    report.prefetch = job_.data->prefetch;
    const auto corrupt = loader.corrupt_files();
    report.corrupt_files.assign(corrupt.begin(), corrupt.end());
    report.epoch_input_stall_seconds = std::move(stall_seconds);
    loader_pass(*tree_, job_, report);
    data_report_ = std::move(report);
  }
  if (reducer_) timed_reduction_ = reducer_->take_statistics();
  if (parallel_) {
    // A data-parallel step lasts as long as its slowest rank: the job's
    // times are the maximum over the ranks; each rank's own stay in per_rank.
    own_step_seconds_ = timing.step_seconds;
    timing.epoch_seconds = parallel_->world.all_reduce_max(std::move(timing.epoch_seconds));
    for (auto& epoch : timing.step_seconds) epoch = parallel_->world.all_reduce_max(std::move(epoch));
  }
  timing.clock = clock_->name();
  const auto read = [this](const std::pair<torch::Tensor, torch::Tensor>& early) {
    return early.first.defined() ? loss_of(early.first, early.second).item<double>() : NAN;
  };
  if (!early_steps_.empty()) loss.first_step = read(early_steps_[0]);
  if (early_steps_.size() > 1) loss.second_step = read(early_steps_[1]);
  loss.reference_eval = reference_eval_;
}

void Experiment::extra_step() { step(data_->next()); }

nlohmann::json Experiment::accuracy_check() {
  // Beyond this many parameters no float64 copy is made: eager at the job's precision is the reference.
  constexpr int64_t kFloat64ReferenceMaxParameters = 1'000'000'000;
  const Batch& batch = reference_ ? *reference_ : data_->peek();
  auto& module = *model_.module;
  std::vector<torch::Tensor> saved;
  {
    torch::NoGradGuard no_grad;
    for (const auto& tensor : module_state(module)) saved.push_back(tensor.detach().clone());
  }
  const auto restore = [&] {
    torch::NoGradGuard no_grad;
    const auto live = module_state(module);
    for (std::size_t i = 0; i < live.size(); ++i) live[i].copy_(saved[i]);
  };
  const auto clear_gradients = [&] {
    for (auto& parameter : module.parameters()) parameter.mutable_grad() = torch::Tensor();
  };
  const bool train = job_.task == Task::train;
  const auto one_step = [&](ForwardPath& path, const torch::Tensor& inputs) {
    restore();
    clear_gradients();
    torch::manual_seed(static_cast<uint64_t>(job_.seed));
    StepTensors tensors;
    if (train) {
      const auto logits = path.forward(inputs);
      const auto loss = class_loss(logits, batch.targets);
      loss.backward();
      tensors.emplace_back("output", logits.detach());
      tensors.emplace_back("loss", loss.detach());
      for (const auto& named : module.named_parameters()) {
        if (named.value().grad().defined()) tensors.emplace_back("grad:" + named.key(), named.value().grad().clone());
      }
    } else {
      torch::NoGradGuard no_grad;
      tensors.emplace_back("output", path.forward(inputs));
    }
    clear_gradients();
    return tensors;
  };
  const auto compiled = one_step(*path_, batch.inputs);
  const auto eager_path = make_eager_path(model_, plan_);
  const auto eager = one_step(*eager_path, batch.inputs);
  std::optional<StepTensors> reference;
  std::optional<std::string> note;
  if (parameters() > kFloat64ReferenceMaxParameters) {
    note = fmt::format("no float64 reference: {} parameters", parameters());
  } else {
    // The module itself, widened and narrowed back: float32 -> float64 -> float32 is exact.
    try {
      module.to(torch::kFloat64);
      const auto wide_path = make_eager_path(model_, PrecisionPlan{});
      reference =
          one_step(*wide_path, batch.inputs.is_floating_point() ? batch.inputs.to(torch::kFloat64) : batch.inputs);
    } catch (const c10::OutOfMemoryError& error) {
      note = "no float64 reference: " + std::string(error.what_without_backtrace());
    }
    module.to(torch::kFloat32);
  }
  restore();
  return accuracy_section(compiled, eager, reference, note);
}

// The eval-mode loss of `batch` through the module as written: in compiled
// mode the captured graph holds training-mode BatchNorm.
double Experiment::evaluate(const Batch& batch) {
  torch::NoGradGuard no_grad;
  model_.module->eval();
  const auto logits = model_.forward(batch.inputs);
  model_.module->train(true);
  return class_loss(logits, batch.targets).item<double>();
}

int64_t Experiment::parameters() const { return count_parameters(*model_.module); }

std::optional<std::string> Experiment::data_layout() const { return data_layout_name(model_, layout_); }

std::optional<LossScalingReport> Experiment::loss_scaling() const {
  return scaler_ ? std::optional(scaler_->report()) : std::nullopt;
}

// One training or inference step. Returns the loss (train) or the logits
// (infer); the losses of the first two steps are remembered.
torch::Tensor Experiment::step(const Batch& batch) {
  torch::Tensor output;
  if (job_.task == Task::train) {
    optimizer_->zero_grad(/*set_to_none=*/true);
    auto loss = class_loss(path_->forward(batch.inputs), batch.targets);
    if (scaler_) {
      scaler_->scale(loss).backward();
      if (reducer_) reducer_->finish();
      scaler_->step(*optimizer_);
    } else {
      loss.backward();
      if (reducer_) reducer_->finish();
      optimizer_->step();
    }
    output = loss.detach();
  } else {
    torch::NoGradGuard no_grad;
    output = path_->forward(batch.inputs);
  }
  if (early_steps_.size() < 2) early_steps_.emplace_back(output, batch.targets);
  return output;
}

torch::Tensor Experiment::loss_of(const torch::Tensor& output, const torch::Tensor& targets) const {
  if (job_.task == Task::train) return output;
  torch::NoGradGuard no_grad;
  return class_loss(output, targets);
}

std::optional<double> Experiment::loss_value(const torch::Tensor& output, const Batch& batch) const {
  if (!output.defined()) return std::nullopt;
  return loss_of(output, batch.targets).item<double>();
}

namespace {

void configure_threads(const Job& job) {
  if (job.interop_threads > 0 && static_cast<int64_t>(at::get_num_interop_threads()) != job.interop_threads) {
    at::set_num_interop_threads(static_cast<int>(job.interop_threads));
  }
  at::set_num_threads(static_cast<int>(job.threads));
}

void add_observations(Result& result) {
  const auto& execution = *result.execution;
  if (execution.mode == Mode::compiled && !execution.fusion) {
    result.warnings.push_back("no warm-up iteration to observe fusion in: fusion is not reported");
  } else if (execution.mode == Mode::compiled && execution.fusion->fused_kernels == 0) {
    result.warnings.push_back(
        cpu_fusion_available() || execution.device.starts_with("cuda")
            ? "compiled mode ran without any fused kernel (TorchScript interpreter only)"
            : "compiled mode ran without any fused kernel: this LibTorch has no LLVM, which its fuser needs to "
              "generate CPU code (the package index's wheels; Debian's LibTorch has it)");
  }
}

// Every rank's part of the report; rank 0 gets all of it. Running statistics
// (BatchNorm) stay per rank during training, as with DistributedDataParallel
// without SyncBatchNorm; rank 0's are adopted at the end so the replicas
// finish identical.
DistributedReport report_data_parallel(Experiment& experiment, const DataParallel& parallel, const MemoryReport& memory,
                                       const torch::Device& device) {
  const auto& world = parallel.world;
  DistributedReport report;
  report.backend = parallel.collective.backend();
  report.ranks = world.size();
  report.overlap = parallel.reducer.overlap;
  report.bucket_bytes = parallel.reducer.bucket_bytes;
  const auto checksums = world.all_gather(checksum(experiment.module().parameters()));
  report.replicas_identical =
      std::all_of(checksums.begin(), checksums.end(), [&](uint64_t value) { return value == checksums.front(); });
  broadcast_tensors(experiment.module().buffers(), parallel.collective, 0);

  RankReport mine;
  mine.rank = world.rank();
  mine.host = world.host();
  mine.device = device.str();
  mine.step_seconds = experiment.own_step_seconds();
  std::vector<double> own_steps;
  for (const auto& epoch : mine.step_seconds) own_steps.insert(own_steps.end(), epoch.begin(), epoch.end());
  mine.median_step_seconds = own_steps.empty() ? 0.0 : stats::median(own_steps);
  double step_total = 0;  // this rank's own
  for (const auto& epoch : mine.step_seconds) step_total = std::accumulate(epoch.begin(), epoch.end(), step_total);
  if (const auto reduction = experiment.timed_reduction()) {
    mine.all_reduce_seconds = reduction->all_reduce_seconds;
    mine.exposed_communication_seconds =
        std::accumulate(reduction->exposed_seconds.begin(), reduction->exposed_seconds.end(), 0.0);
    report.all_reduces = reduction->all_reduces;
    report.all_reduce_seconds = reduction->all_reduce_seconds;
    if (reduction->all_reduce_seconds > 0) {
      const double n = static_cast<double>(world.size());
      report.algorithm_bandwidth_gbps = static_cast<double>(reduction->bytes) / reduction->all_reduce_seconds / 1e9;
      report.bus_bandwidth_gbps = *report.algorithm_bandwidth_gbps * 2.0 * (n - 1.0) / n;
    }
  }
  mine.compute_seconds = step_total - mine.exposed_communication_seconds;
  mine.peak_memory_bytes = memory.peak_allocated_bytes ? memory.peak_allocated_bytes : memory.rss_footprint_bytes;
  report.communication_fraction = step_total > 0 ? mine.exposed_communication_seconds / step_total : 0.0;
  if (const auto* reducer = experiment.reducer()) {
    report.buckets = reducer->bucket_count();
    report.gradient_bytes = reducer->gradient_bytes();
  }
  std::set<std::string> hosts;
  for (const auto& rank : world.gather(to_json(mine), 0)) {
    report.per_rank.push_back(rank_report_from_json(rank));
    hosts.insert(report.per_rank.back().host);
  }
  report.nodes = std::max<int64_t>(1, static_cast<int64_t>(hosts.size()));
  return report;
}

Result finish(Result& result) {
  if (result.error) log::error("job failed: {}", *result.error);
  result.context = capture_context();
  result.finished_at = utc_timestamp();
  return std::move(result);
}

}  // namespace

Result run_experiment(const Job& job, const World* world, const CaptureFunction& capture,
                      const std::filesystem::path& beside_result) {
  Result result;
  result.job = job;
  result.started_at = utc_timestamp();
  for (const auto& knob : job.torch_compile_knobs) {
    result.warnings.push_back("knob '" + knob + "' is read by the torch-compile runner only and was ignored");
  }
  try {
    configure_threads(job);
    if (job.mode == Mode::graph) {
      throw Unsupported(
          "mode graph is the tensorflow runner's (tf.function without XLA); this runner runs eager and "
          "compiled");
    }
    const int ranks = world ? world->size() : 1;
    if (job.gpus != ranks) {
      throw Unsupported("gpus = " + std::to_string(job.gpus) + " but " + std::to_string(ranks) +
                        " rank(s) were started: multi-rank jobs run under mpirun -np " + std::to_string(job.gpus) +
                        ", which the agent does for them (docs/multi-gpu.md)");
    }
    const auto device = resolve_device(world ? rank_device(job.device, world->local_rank(), world->size()) : job.device,
                                       *cuda_devices());
    const auto plan = plan_precision(job.precision, device);
    const auto math = apply_math_policy(job);
    if (job.task == Task::generate) {
      if (world) throw Unsupported("generate runs in one process on one device; data_parallel: always trains only");
      run_generation_job(job, device, plan, math, beside_result, result);
      return finish(result);
    }
    // Everything above fails alike on every rank; from here on a rank that
    // fails may leave the others inside a collective.
    std::unique_ptr<Collective> collective;
    std::optional<DataParallel> parallel;
    if (world) {
      collective = make_collective(*world, device);
      parallel.emplace(DataParallel{*world, *collective,
                                    ReducerOptions{static_cast<int64_t>(job.bucket_mb * 1024 * 1024), job.overlap,
                                                   std::max<int64_t>(1, job.iters)}});
      result.ranks_diverged = world->size() > 1;
    }

    MemoryProbe memory_probe(device);  // before any model: the process's baseline
    ExecutionReport execution;
    execution.task = job.task;
    execution.precision = job.precision;
    execution.autocast_dtype = autocast_dtype_name(plan);
    execution.device = device.str();
    execution.math = math;
    TimingReport timing;
    std::optional<Experiment> experiment;
    auto prepare = [&](Mode mode) {
      timing = TimingReport{};
      execution.fusion.reset();
      experiment.reset();
      experiment.emplace(job, device, plan, mode, capture, parallel ? &*parallel : nullptr);
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
    experiment->run_timed_epochs(timing, loss, memory_probe, memory);
    if (!job.profile.is_null()) {  // after the timed epochs, before the accuracy gate's steps
      const bool writes_trace = !parallel || parallel->world.rank() == 0;
      result.profile = profile_steps(
          profile_options(job.profile), device, [&] { experiment->extra_step(); }, beside_result, writes_trace);
    }
    if (job.mode == Mode::compiled) {
      if (execution.mode == Mode::eager) {
        result.accuracy = nlohmann::json{{"skipped", "fell back to eager: " + *execution.fallback_reason}};
      } else if (parallel) {
        result.accuracy = nlohmann::json{{"skipped", "data-parallel jobs are not compared with eager yet"}};
      } else {
        result.accuracy = experiment->accuracy_check();
      }
    }
    if (parallel) execution.distributed = report_data_parallel(*experiment, *parallel, memory, device);
    execution.compiler = experiment->compiler();
    execution.capture_seconds = experiment->capture_seconds();
    execution.loss_scaling = experiment->loss_scaling();
    execution.model_parameters = experiment->parameters();
    execution.data_layout = experiment->data_layout();
    execution.initial_parameter_l1 = experiment->initial_parameter_l1();
    execution.initial_weights = job.initial_weights;
    execution.reference_batch = job.reference_batch;
    result.execution = execution;
    result.timing = std::move(timing);
    result.loss = std::move(loss);
    result.memory = memory;
    result.data = experiment->data_report();
    add_observations(result);
    result.status = Status::ok;
    result.ranks_diverged = false;
  } catch (const InvalidInput&) {
    throw;
  } catch (const Unsupported& error) {
    result.status = Status::unsupported;
    result.error = error.what();
  } catch (const std::exception& error) {
    result.status = Status::failed;
    result.error = message_of(error);
  }
  return finish(result);
}

}  // namespace ts::worker
