// The shared starting point (docs/frameworks.md) in the LibTorch worker:
// the files it writes load back into the same model and batch, a run from
// them reports the early losses, and a file that does not fit fails the job.
#include "runners/libtorch/start_state.hpp"

#include <gtest/gtest.h>

#include "runners/libtorch/experiment.hpp"
#include "tests/runners/libtorch/tiny_jobs.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::worker {
namespace {

class StartState : public ::testing::Test {
 protected:
  // The starting point of `job`, written by the worker.
  nlohmann::json with_files(nlohmann::json job, const std::string& name) {
    const auto parsed = parse_job(job);
    const auto weights = (temp_.path() / (name + ".weights.safetensors")).string();
    const auto batch = (temp_.path() / (name + ".batch.safetensors")).string();
    write_initial_weights(parsed, weights);
    write_reference_batch(parsed, batch);
    job["initial_weights"] = weights;
    job["reference_batch"] = batch;
    return job;
  }

  ::ts::testing::TempDirectory temp_{"ts_start_state"};
};

Result run(const nlohmann::json& document) { return run_experiment(parse_job(document)); }

TEST_F(StartState, ARunFromTheFilesOfAnotherSeedIsThatSeedsRun) {
  auto job = testing::tiny_resnet18();
  job["seed"] = 3;
  const auto seeded = run(job);
  auto loaded_job = with_files(job, "seed3");
  loaded_job["seed"] = 11;  // the weights and the first batch come from the files
  const auto loaded = run(loaded_job);
  ASSERT_EQ(seeded.status, Status::ok) << seeded.error.value_or("");
  ASSERT_EQ(loaded.status, Status::ok) << loaded.error.value_or("");
  EXPECT_DOUBLE_EQ(loaded.execution->initial_parameter_l1, seeded.execution->initial_parameter_l1);
  EXPECT_NEAR(*loaded.loss->first_step, *seeded.loss->first_step, 1e-6);
  EXPECT_EQ(loaded.execution->initial_weights, loaded_job["initial_weights"].get<std::string>());
  EXPECT_FALSE(seeded.execution->initial_weights.has_value());
  EXPECT_FALSE(seeded.loss->reference_eval.has_value());
}

TEST_F(StartState, BothModesReportTheSameEarlyLossesFromTheReferenceBatch) {
  auto job = with_files(testing::tiny_resnet18(), "modes");
  job["warmup"] = 0;  // the reference batch still takes two steps
  const auto eager = run(job);
  job["mode"] = "compiled";
  const auto compiled = run(job);
  for (const auto* result : {&eager, &compiled}) {
    ASSERT_EQ(result->status, Status::ok) << result->error.value_or("");
    ASSERT_TRUE(result->loss->second_step && result->loss->reference_eval);
  }
  EXPECT_NE(*eager.loss->second_step, *eager.loss->first_step);
  EXPECT_NEAR(*compiled.loss->first_step, *eager.loss->first_step, 1e-5 * *eager.loss->first_step);
  EXPECT_NEAR(*compiled.loss->second_step, *eager.loss->second_step, 1e-4 * *eager.loss->second_step);
  EXPECT_NEAR(*compiled.loss->reference_eval, *eager.loss->reference_eval, 1e-3 * *eager.loss->reference_eval);
}

TEST_F(StartState, FilesThatDoNotFitTheModelFailTheJobNamingTheField) {
  const auto job = with_files(testing::tiny_mlp(), "mlp");
  auto wider = job;
  wider["width"] = 64;
  wider.erase("reference_batch");
  const auto weights = run(wider);
  EXPECT_EQ(weights.status, Status::failed);
  EXPECT_NE(weights.error->find("initial_weights"), std::string::npos) << *weights.error;
  EXPECT_NE(weights.error->find("hidden.0.weight has shape [32, 16]"), std::string::npos) << *weights.error;
  auto smaller = job;
  smaller["batch_size"] = 4;
  smaller.erase("initial_weights");
  const auto batch = run(smaller);
  EXPECT_EQ(batch.status, Status::failed);
  EXPECT_NE(batch.error->find("reference_batch"), std::string::npos) << *batch.error;
  auto missing = job;
  missing["initial_weights"] = "/nonexistent.safetensors";
  EXPECT_EQ(run(missing).status, Status::failed);
}

TEST(StartStateMode, GraphModeIsTheTensorflowRunnersAndUnsupportedHere) {
  auto job = testing::tiny_mlp();
  job["mode"] = "graph";
  const auto result = run(job);
  EXPECT_EQ(result.status, Status::unsupported);
  EXPECT_NE(result.error->find("tensorflow"), std::string::npos) << *result.error;
}

}  // namespace
}  // namespace ts::worker
