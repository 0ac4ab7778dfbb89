// What the worker's generation harness costs (task generate,
// docs/language-models.md): the median decode-step time of run_experiment
// against a hand-written LibTorch greedy loop over the same decoder, cache
// and prompt, interleaved in one process (the order alternating each round)
// so both see the same machine. Target: within 3%.
//
//   bench_decode_overhead [batch] [prompt_len] [new_tokens] [rounds]
// Prints both medians and the ratio with a bootstrap confidence interval.
#include <chrono>
#include <cstdio>
#include <string>

#include "bench/interleaved.hpp"
#include "runners/libtorch/experiment.hpp"
#include "runners/libtorch/models/registry.hpp"

namespace {

using namespace ts::worker;

// The loop a user would write: prefill, then argmax and one cached forward a token.
std::vector<double> hand_written_steps(const Job& job) {
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  auto model = find_model(job.model).build(job.model_config);
  model.module->eval();
  torch::NoGradGuard no_grad;
  torch::manual_seed(static_cast<uint64_t>(job.seed) + 1);  // the worker's first prompt
  const auto prompt = torch::randint(model.num_classes, {job.batch_size, job.prompt_len}, torch::kLong);
  auto cache = model.make_cache(job.batch_size, job.prompt_len + job.new_tokens - 1, torch::kFloat);
  std::vector<double> seconds;
  for (int64_t generation = 0; generation < job.warmup + job.epochs; ++generation) {
    cache.filled = 0;
    auto token = model.forward_cached(prompt, cache).argmax(-1, true);
    for (int64_t i = 1; i < job.new_tokens; ++i) {
      const auto start = std::chrono::steady_clock::now();
      token = model.forward_cached(token, cache).argmax(-1, true);
      if (generation >= job.warmup) {
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
  }
  return seconds;
}

std::vector<double> worker_steps(const Job& job) {
  const auto result = run_experiment(job);
  if (result.status != Status::ok) throw std::runtime_error(result.error.value_or("failed"));
  std::vector<double> seconds;
  for (const auto& epoch : result.timing->step_seconds) seconds.insert(seconds.end(), epoch.begin(), epoch.end());
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::stoll(argv[1]) : 4;
  const int64_t prompt_len = argc > 2 ? std::stoll(argv[2]) : 64;
  const int64_t new_tokens = argc > 3 ? std::stoll(argv[3]) : 64;
  const int rounds = argc > 4 ? std::stoi(argv[4]) : 6;
  // GPT-2 small's shape at depth 4 and a 8192-token vocabulary: a decode step of about a millisecond here.
  const auto job = parse_job({{"schema_version", 1},
                              {"model", "gpt"},
                              {"task", "generate"},
                              {"batch_size", batch},
                              {"vocab", 8192},
                              {"width", 768},
                              {"heads", 12},
                              {"depth", 4},
                              {"seq_len", 256},
                              {"prompt_len", prompt_len},
                              {"new_tokens", new_tokens},
                              {"epochs", 3},
                              {"warmup", 2},
                              {"data_batches", 1}});
  at::set_num_threads(static_cast<int>(job.threads));

  const auto steps = ts::bench::interleave(
      rounds, [&] { return hand_written_steps(job); }, [&] { return worker_steps(job); });
  std::printf(
      "gpt width 768 depth 4 vocab 8192, batch %lld, prompt %lld, %lld new tokens, threads %lld, %d rounds x "
      "%zu decode steps a side\n",
      static_cast<long long>(batch), static_cast<long long>(prompt_len), static_cast<long long>(new_tokens),
      static_cast<long long>(job.threads), rounds, steps.plain.size() / static_cast<std::size_t>(rounds));
  ts::bench::print_ratio(steps);
  return 0;
}
