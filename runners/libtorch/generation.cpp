#include "runners/libtorch/generation.hpp"

#include "runners/libtorch/memory_probe.hpp"
#include "runners/libtorch/models/registry.hpp"
#include "runners/libtorch/profiler.hpp"
#include "runners/libtorch/start_state.hpp"
#include "shared/progress_file.hpp"

namespace ts::worker {
namespace {

// The greedy generator of one model: prompts made before the timed region
// (data_batches of them, handed out in turn) and one cache reused by every
// generation.
class Generator {
 public:
  Generator(const Job& job, torch::Device device, const PrecisionPlan& plan, Model& model)
      : model_(model), plan_(plan) {
    for (int64_t i = 0; i < job.data_batches; ++i) {
      prompts_.push_back(torch::randint(model.num_classes, {job.batch_size, job.prompt_len},
                                        torch::TensorOptions(torch::kLong).device(device)));
    }
    cache_ = model.make_cache(job.batch_size, job.prompt_len + job.new_tokens - 1,
                              plan.autocast_dtype.value_or(torch::kFloat));
  }

  const torch::Tensor& next_prompt() {
    const auto& prompt = prompts_[position_];
    position_ = (position_ + 1) % prompts_.size();
    return prompt;
  }
  torch::Tensor prefill(const torch::Tensor& prompt) {
    cache_.filled = 0;
    return greedy(prompt);
  }
  torch::Tensor decode(const torch::Tensor& token) { return greedy(token); }
  int64_t cache_bytes() const {
    int64_t bytes = 0;
    for (const auto* part : {&cache_.keys, &cache_.values}) {
      for (const auto& tensor : *part) bytes += static_cast<int64_t>(tensor.nbytes());
    }
    return bytes;
  }

 private:
  torch::Tensor greedy(const torch::Tensor& ids) {
    AutocastScope autocast(plan_);
    return model_.forward_cached(ids, cache_).argmax(-1, /*keepdim=*/true);
  }

  Model& model_;
  PrecisionPlan plan_;
  std::vector<torch::Tensor> prompts_;
  std::size_t position_ = 0;
  KeyValueCache cache_;
};

struct Generated {
  double seconds = 0, prefill_seconds = 0;
  std::vector<double> decode_seconds;
  torch::Tensor tokens;  // [batch, new_tokens]
};

// One generation on `clock`: the prefill its first step, each decode step one more.
Generated generate(Generator& generator, StepClock& clock, int64_t new_tokens) {
  const auto& prompt = generator.next_prompt();
  clock.begin_epoch();
  clock.begin_step();
  auto token = generator.prefill(prompt);
  clock.end_step();
  std::vector<torch::Tensor> tokens{token};
  for (int64_t i = 1; i < new_tokens; ++i) {
    clock.begin_step();
    token = generator.decode(token);
    clock.end_step();
    tokens.push_back(token);
  }
  auto times = clock.end_epoch();
  Generated generated{times.seconds, times.step_seconds.front(), {}, torch::cat(tokens, 1)};
  generated.decode_seconds.assign(times.step_seconds.begin() + 1, times.step_seconds.end());
  return generated;
}

struct GenerationRun {
  TimingReport timing;
  GenerationReport generation;
  MemoryReport memory;
  int64_t parameters = 0;
  double initial_parameter_l1 = 0;
  std::optional<nlohmann::json> profile;  // the job's profile: each profiled step one whole generation
};

// `probe` was created before the model.
GenerationRun run_generation(const Job& job, torch::Device device, const PrecisionPlan& plan, MemoryProbe& probe,
                             const std::filesystem::path& beside_result) {
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  auto model = find_model(job.model, job.model_root).build(job.model_config);
  if (!model.forward_cached) throw Unsupported("model " + job.model + " is no decoder: it generates nothing");
  if (job.initial_weights) load_initial_weights(*model.module, *job.initial_weights);
  model.module->to(device);
  model.module->eval();
  GenerationRun run;
  run.parameters = count_parameters(*model.module);
  for (const auto& parameter : model.module->parameters()) {
    run.initial_parameter_l1 += parameter.detach().to(torch::kFloat64).abs().sum().item<double>();
  }
  torch::manual_seed(static_cast<uint64_t>(job.seed) + 1);
  torch::NoGradGuard no_grad;
  Generator generator(job, device, plan, model);

  // Compilation-free, but the allocator grows and the caches warm in the
  // first generations: they stay out of the timed ones, as for training.
  auto warm_clock = make_step_clock(torch::kCPU, job.new_tokens);
  auto& timing = run.timing;
  timing.warmup_iterations = job.warmup;
  timing.first_iteration_seconds =
      synchronized_seconds(device, [&] { generate(generator, *warm_clock, job.new_tokens); });
  timing.warmup_seconds = *timing.first_iteration_seconds + synchronized_seconds(device, [&] {
    for (int64_t i = 1; i < job.warmup; ++i) generate(generator, *warm_clock, job.new_tokens);
  });

  auto clock = make_step_clock(device, job.new_tokens);
  ProgressFile progress;
  synchronize(device);
  probe.begin_timed_phase();
  Generated last;
  for (int64_t epoch = 0; epoch < job.epochs; ++epoch) {
    last = generate(generator, *clock, job.new_tokens);
    timing.epoch_seconds.push_back(last.seconds);
    timing.step_seconds.push_back(last.decode_seconds);
    run.generation.prefill_seconds.push_back(last.prefill_seconds);
    progress.epoch_finished(epoch + 1, job.epochs, last.seconds);
  }
  run.memory = probe.end();
  if (!job.profile.is_null()) {  // after the timed generations, on the warm-up's clock: no figure sees them
    run.profile = profile_steps(
        profile_options(job.profile), device, [&] { generate(generator, *warm_clock, job.new_tokens); }, beside_result,
        true);
  }
  timing.clock = clock->name();
  timing.iterations_per_epoch = job.iters;  // as resolved: the decode steps
  run.generation.prompt_len = job.prompt_len;
  run.generation.new_tokens = job.new_tokens;
  run.generation.kv_cache_bytes = generator.cache_bytes();
  const auto first = last.tokens[0].to(torch::kCPU);
  run.generation.tokens.assign(first.data_ptr<int64_t>(), first.data_ptr<int64_t>() + first.numel());
  return run;
}

}  // namespace

void run_generation_job(const Job& job, const torch::Device& device, const PrecisionPlan& plan,
                        const nlohmann::json& math, const std::filesystem::path& beside_result, Result& result) {
  if (job.mode == Mode::compiled) {
    throw Unsupported(
        "compiled generation is the torch-compile runner's (torch.compile of the decode step): this worker's "
        "compiled mode traces one fixed-shape forward with TorchScript, and a decode step attends over a cache that "
        "grows a position every step");
  }
  MemoryProbe memory_probe(device);  // before the model: the process's baseline
  auto run = run_generation(job, device, plan, memory_probe, beside_result);
  ExecutionReport execution;
  execution.task = job.task;
  execution.mode = Mode::eager;
  execution.precision = job.precision;
  execution.autocast_dtype = autocast_dtype_name(plan);
  execution.device = device.str();
  execution.math = math;
  execution.model_parameters = run.parameters;
  execution.initial_parameter_l1 = run.initial_parameter_l1;
  execution.initial_weights = job.initial_weights;
  result.execution = execution;
  result.loss = LossReport{std::nullopt, std::nullopt, std::nullopt,
                           std::vector<std::optional<double>>(static_cast<std::size_t>(job.epochs))};
  result.timing = std::move(run.timing);
  result.memory = run.memory;
  result.generation = std::move(run.generation);
  result.profile = std::move(run.profile);
  result.status = Status::ok;
}

}  // namespace ts::worker
