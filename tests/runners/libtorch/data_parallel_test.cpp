// Data-parallel training on CPU ranks. Run under mpirun (ctest does, with 2
// and 3 ranks): every rank runs every test, so the collectives line up, and a
// failure on any rank fails the run.
#include "runners/libtorch/distributed/data_parallel.hpp"

#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "runners/libtorch/distributed/module_state.hpp"
#include "runners/libtorch/distributed/mpi_world.hpp"
#include "runners/libtorch/experiment.hpp"
#include "runners/libtorch/models/registry.hpp"
#include "tests/runners/libtorch/tiny_jobs.hpp"

namespace ts::worker {
namespace {

const MpiWorld* world = nullptr;  // the MPI runtime this test program started

constexpr int64_t steps = 6;

Job tiny_job(const nlohmann::json& changes = nlohmann::json::object()) {
  auto document = testing::tiny_mlp();
  document["gpus"] = world->size();
  document["warmup"] = steps;
  document["momentum"] = 0.9;
  document["weight_decay"] = 0.01;
  document.update(changes);
  return parse_job(document);
}

// Trains `steps` data-parallel steps (the warm-up) and returns the module's
// parameters afterwards.
std::vector<torch::Tensor> train_data_parallel(const Job& job, ReducerOptions options, Mode mode = Mode::eager) {
  const torch::Device cpu(torch::kCPU);
  auto collective = make_collective(*world, cpu);
  const DataParallel parallel{*world, *collective, options};
  Experiment experiment(job, cpu, plan_precision(job.precision, cpu), mode, capture_torchscript, &parallel);
  TimingReport timing;
  std::optional<FusionReport> fusion;
  experiment.warm_up(timing, fusion);
  std::vector<torch::Tensor> parameters;
  for (const auto& parameter : experiment.module().parameters()) parameters.push_back(parameter.detach().clone());
  return parameters;
}

// The same steps in one process on the ranks' batches laid end to end: what
// data-parallel training must be equivalent to. Written out independently
// of the Experiment class on purpose.
std::vector<torch::Tensor> train_on_concatenated_batches(const Job& job) {
  const torch::Device cpu(torch::kCPU);
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  auto model = find_model(job.model).build(job.model_config);
  model.module->train();
  std::vector<SyntheticData> shards;
  for (int rank = 0; rank < world->size(); ++rank) {
    shards.emplace_back(job.batch_size, model.sample_shape, model.num_classes, job.data_batches,
                        rank_data_seed(job.seed, rank), cpu);
  }
  torch::optim::SGD optimizer(model.module->parameters(),
                              torch::optim::SGDOptions(job.lr).momentum(job.momentum).weight_decay(job.weight_decay));
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<torch::Tensor> inputs, targets;
    for (auto& shard : shards) {
      const auto& batch = shard.next();
      inputs.push_back(batch.inputs);
      targets.push_back(batch.targets);
    }
    optimizer.zero_grad(true);
    torch::nn::functional::cross_entropy(model.forward(torch::cat(inputs)), torch::cat(targets)).backward();
    optimizer.step();
  }
  std::vector<torch::Tensor> parameters;
  for (const auto& parameter : model.module->parameters()) parameters.push_back(parameter.detach().clone());
  return parameters;
}

bool identical_on_every_rank(const std::vector<torch::Tensor>& parameters) {
  const auto checksums = world->all_gather(checksum(parameters));
  return std::all_of(checksums.begin(), checksums.end(), [&](uint64_t value) { return value == checksums.front(); });
}

void expect_bitwise_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST(DataParallel, ReplicasStayBitwiseIdentical) {
  const auto parameters = train_data_parallel(tiny_job(), ReducerOptions{});
  EXPECT_TRUE(identical_on_every_rank(parameters));
}

TEST(DataParallel, MatchesOneProcessOnTheConcatenatedBatch) {
  const auto job = tiny_job();
  const auto parallel = train_data_parallel(job, ReducerOptions{});
  const auto reference = train_on_concatenated_batches(job);
  ASSERT_EQ(parallel.size(), reference.size());
  for (std::size_t i = 0; i < parallel.size(); ++i) {
    EXPECT_TRUE(torch::allclose(parallel[i], reference[i], /*rtol=*/1e-4, /*atol=*/1e-6))
        << "parameter " << i << " differs by up to " << (parallel[i] - reference[i]).abs().max().item<double>();
  }
  // Training moved the weights: the comparison is not between two copies
  // of the initial state.
  torch::manual_seed(static_cast<uint64_t>(job.seed));
  const auto initial = find_model(job.model).build(job.model_config).module->parameters();
  EXPECT_FALSE(torch::allclose(parallel.front(), initial.front()));
}

TEST(DataParallel, OverlapOnAndOffGiveBitwiseTheSameParameters) {
  const auto job = tiny_job();
  // Small buckets, so there are several and overlap has something to overlap.
  const auto overlapped = train_data_parallel(job, ReducerOptions{2048, true});
  const auto sequential = train_data_parallel(job, ReducerOptions{2048, false});
  expect_bitwise_equal(overlapped, sequential);
}

TEST(DataParallel, BucketSizeDoesNotChangeTheResult) {
  const auto job = tiny_job();
  const auto many = train_data_parallel(job, ReducerOptions{512, true});
  const auto one = train_data_parallel(job, ReducerOptions{int64_t{1} << 30, true});
  for (std::size_t i = 0; i < many.size(); ++i) EXPECT_TRUE(torch::allclose(many[i], one[i], 1e-5, 1e-7));
}

TEST(DataParallel, CompiledModeTrainsTheSameWay) {
  const auto job = tiny_job({{"mode", "compiled"}});
  const auto compiled = train_data_parallel(job, ReducerOptions{}, Mode::compiled);
  EXPECT_TRUE(identical_on_every_rank(compiled));
  const auto reference = train_on_concatenated_batches(job);
  for (std::size_t i = 0; i < compiled.size(); ++i) EXPECT_TRUE(torch::allclose(compiled[i], reference[i], 1e-4, 1e-6));
}

TEST(DataParallel, ResultReportsEveryRank) {
  const auto job = tiny_job({{"warmup", 2}, {"bucket_mb", 0.001}});
  const auto result = run_experiment(job, world);
  ASSERT_EQ(result.status, Status::ok) << result.error.value_or("");
  ASSERT_TRUE(result.execution->distributed);
  const auto& report = *result.execution->distributed;
  EXPECT_EQ(report.backend, "mpi");
  EXPECT_EQ(report.ranks, world->size());
  EXPECT_TRUE(report.replicas_identical);
  EXPECT_GT(report.buckets, 1);
  EXPECT_EQ(report.all_reduces, report.buckets * job.epochs * job.iters);
  ASSERT_TRUE(report.algorithm_bandwidth_gbps);
  EXPECT_NEAR(*report.bus_bandwidth_gbps,
              *report.algorithm_bandwidth_gbps * 2.0 * (world->size() - 1) / static_cast<double>(world->size()), 1e-12);
  // Global throughput, as the agent judges the result: every rank's batch counts.
  auto document = to_json(result);
  agent::judge(document, {});
  const auto throughput = document.at("timing").at("samples_per_second").get<double>();
  EXPECT_NEAR(throughput,
              static_cast<double>(job.batch_size * world->size() * job.iters) /
                  document.at("timing").at("median_epoch_seconds").get<double>(),
              1e-6 * throughput);
  if (world->rank() == 0) {
    ASSERT_EQ(report.per_rank.size(), static_cast<std::size_t>(world->size()));
    for (int rank = 0; rank < world->size(); ++rank) {
      const auto& entry = report.per_rank[static_cast<std::size_t>(rank)];
      EXPECT_EQ(entry.rank, rank);
      EXPECT_EQ(entry.step_seconds.size(), static_cast<std::size_t>(job.epochs));
      // The job's step lasts as long as its slowest rank's.
      for (std::size_t e = 0; e < entry.step_seconds.size(); ++e) {
        for (std::size_t s = 0; s < entry.step_seconds[e].size(); ++s) {
          EXPECT_GE(result.timing->step_seconds[e][s], entry.step_seconds[e][s]);
        }
      }
      EXPECT_GT(entry.all_reduce_seconds, 0);
      EXPECT_NEAR(entry.compute_seconds + entry.exposed_communication_seconds,
                  std::accumulate(
                      entry.step_seconds.begin(), entry.step_seconds.end(), 0.0,
                      [](double sum, const auto& epoch) { return std::accumulate(epoch.begin(), epoch.end(), sum); }),
                  1e-9);
    }
  }
}

TEST(DataParallel, AJobForOtherRankCountsIsRefusedAlikeEverywhere) {
  const auto result = run_experiment(tiny_job({{"gpus", world->size() + 1}}), world);
  EXPECT_EQ(result.status, Status::unsupported);
  EXPECT_FALSE(result.ranks_diverged);
}

}  // namespace
}  // namespace ts::worker

int main(int argc, char** argv) {
  ts::worker::MpiWorld world;
  ts::worker::world = &world;
  ::testing::InitGoogleTest(&argc, argv);
  // One rank prints: the others' output would only repeat it.
  if (world.rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  return RUN_ALL_TESTS();
}
