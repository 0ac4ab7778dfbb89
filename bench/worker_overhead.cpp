// What the worker's harness costs: the median step time of run_experiment
// against a minimal hand-written LibTorch training loop over the same model,
// batch, optimizer and data, interleaved in one process so both see the same
// machine state. Target: the worker adds under 2%.
//
//   bench_worker_overhead [model] [batch] [input_size] [rounds]
// Prints both medians and the ratio with a bootstrap confidence interval.
#include <chrono>
#include <cstdio>
#include <string>

#include "bench/interleaved.hpp"
#include "runners/libtorch/experiment.hpp"
#include "runners/libtorch/models/registry.hpp"

namespace {

using namespace ts::worker;

// The loop a user would write by hand: no clocks per step beyond the one we
// need to compare, no observers, no result document.
std::vector<double> hand_written_steps(const Job& job) {
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  auto model = find_model(job.model).build(job.model_config);
  model.module->train();
  torch::optim::SGD optimizer(model.module->parameters(), torch::optim::SGDOptions(job.lr).momentum(job.momentum));
  std::vector<int64_t> shape{job.batch_size};
  shape.insert(shape.end(), model.sample_shape.begin(), model.sample_shape.end());
  const auto inputs = torch::randn(shape);
  const auto targets = torch::randint(model.num_classes, {job.batch_size}, torch::kLong);
  auto step = [&] {
    optimizer.zero_grad(true);
    auto loss = torch::nn::functional::cross_entropy(model.forward(inputs), targets);
    loss.backward();
    optimizer.step();
  };
  for (int64_t i = 0; i < job.warmup; ++i) step();
  std::vector<double> seconds;
  for (int64_t i = 0; i < job.epochs * job.iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

std::vector<double> worker_steps(const Job& job) {
  const auto result = run_experiment(job);
  std::vector<double> seconds;
  for (const auto& epoch : result.timing->step_seconds) seconds.insert(seconds.end(), epoch.begin(), epoch.end());
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : "resnet18";
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 16;
  const int64_t input_size = argc > 3 ? std::stoll(argv[3]) : 64;
  const int rounds = argc > 4 ? std::stoi(argv[4]) : 3;
  nlohmann::json document{{"schema_version", 1}, {"model", model}, {"batch_size", batch}, {"epochs", 2},
                          {"warmup", 5},         {"iters", 10},    {"data_batches", 1}};
  if (model != "transformer") document["input_size"] = input_size;
  const auto job = parse_job(document);
  at::set_num_threads(static_cast<int>(job.threads));

  const auto steps = ts::bench::interleave(
      rounds, [&] { return hand_written_steps(job); }, [&] { return worker_steps(job); });
  std::printf("model %s, batch %lld, input %lld, threads %lld, %d rounds x %zu steps each\n", model.c_str(),
              static_cast<long long>(batch), static_cast<long long>(input_size), static_cast<long long>(job.threads),
              rounds, steps.plain.size() / static_cast<std::size_t>(rounds));
  ts::bench::print_ratio(steps);
  return 0;
}
