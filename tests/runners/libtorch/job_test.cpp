#include "runners/libtorch/job.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"
#include "shared/job_resolution.hpp"
#include "tests/runners/libtorch/tiny_jobs.hpp"

namespace ts::worker {
namespace {

TEST(Job, ResolvesDocumentedDefaults) {
  const auto job = parse_job({{"schema_version", 1}, {"model", "resnet50"}, {"batch_size", 64}});
  EXPECT_EQ(job.task, Task::train);
  EXPECT_EQ(job.mode, Mode::eager);
  EXPECT_EQ(job.precision, Precision::fp32);
  EXPECT_EQ(job.fallback, Fallback::none);
  EXPECT_EQ(job.epochs, 5);
  EXPECT_EQ(job.warmup, 10);
  EXPECT_EQ(job.iters, 50000 / 64);
  EXPECT_EQ(job.threads, job_resolution::cores_available());
  EXPECT_EQ(job.model_config.input_size, 224);
  EXPECT_EQ(job.model_config.num_classes, 1000);
  EXPECT_EQ(job.device, "cpu");
}

TEST(Job, ItersComeFromDatasetSizeWhenNotGiven) {
  const auto job = parse_job({{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 100}, {"dataset_size", 1050}});
  EXPECT_EQ(job.iters, 10);
}

// The worker profiles (runners/libtorch/profiler.hpp): the agent's resolution fills the profile's defaults and
// the worker reads the profile as resolved, echoing it.
TEST(Job, AProfileIsReadAsResolvedAndEchoed) {
  auto document = testing::tiny_mlp();
  document["profile"] = {{"steps", 2}};
  const auto resolved = job_resolution::resolve(document, {"libtorch", 2});
  EXPECT_EQ(resolved.at("profile"), (nlohmann::json{{"steps", 2},
                                                    {"activities", {"cpu", "cuda"}},
                                                    {"record_shapes", true},
                                                    {"memory", false},
                                                    {"with_stack", false},
                                                    {"max_trace_mib", 8}}));
  const auto job = parse_job(resolved);
  EXPECT_EQ(job.profile, resolved.at("profile"));
  EXPECT_EQ(to_json(job).at("profile"), resolved.at("profile"));
  EXPECT_TRUE(job.torch_compile_knobs.empty());
  EXPECT_TRUE(parse_job(testing::tiny_mlp()).profile.is_null());
}

TEST(Job, AKnobTheModelDoesNotTakeIsRefused) {
  auto document = testing::tiny_mlp();
  document["heads"] = 4;
  EXPECT_THROW(parse_job(document), InvalidInput);
}

TEST(Job, RoundTripsThroughItsDocument) {
  auto document = testing::tiny_transformer();
  document["labels"] = {{"owner", "perf"}};
  document["job_id"] = "j-1";
  document["precision"] = "bf16";
  const auto job = parse_job(document);
  const auto written = to_json(job);
  EXPECT_EQ(to_json(parse_job(written)), written);
  EXPECT_EQ(written.at("labels").at("owner"), "perf");
  EXPECT_EQ(written.at("seq_len"), 8);
}

TEST(Job, InvalidDocumentsNameTheField) {
  auto expect_field = [](nlohmann::json document, const std::string& field) {
    try {
      parse_job(document);
      ADD_FAILURE() << "accepted " << document.dump();
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), field) << error.what();
    }
  };
  auto document = testing::tiny_mlp();
  document["mode"] = "jit";
  expect_field(document, "mode");
  document = testing::tiny_mlp();
  document["model"] = "vgg16";
  expect_field(document, "model");
  document = testing::tiny_mlp();
  document.erase("model");
  expect_field(document, "model");
  document = testing::tiny_mlp();
  document["schema_version"] = 2;
  expect_field(document, "schema_version");
}

}  // namespace
}  // namespace ts::worker
