// torchsweep-worker as a process: the worker contract's exit codes and files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "shared/schema.hpp"
#include "tests/runners/libtorch/tiny_jobs.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::worker {
namespace {

using ts::testing::run_program;

class WorkerProcess : public ::testing::Test {
 protected:
  std::string write_job(const std::string& text) {
    const auto path = directory_ / "job.json";
    std::ofstream(path) << text;
    return path.string();
  }
  std::string out_path() const { return (directory_ / "result.json").string(); }

  ts::testing::TempDirectory temp_{"ts_worker"};
  const std::filesystem::path& directory_ = temp_.path();
};

TEST_F(WorkerProcess, BadJobsExitWith2NameTheFieldAndWriteNoResult) {
  struct Case {
    std::string job;
    std::string mentioned;
  };
  auto job_with = [](const nlohmann::json& changes) {
    auto job = testing::tiny_mlp();
    job.update(changes);
    return job.dump();
  };
  auto without_batch = testing::tiny_mlp();
  without_batch.erase("batch_size");
  const std::vector<Case> cases{
      {job_with({{"model", "vgg"}}), "model"},
      {job_with({{"batch_size", 0}}), "batch_size"},
      {without_batch.dump(), "batch_size"},
      {job_with({{"precision", "fp8"}}), "precision"},
      {job_with({{"optimiser", "sgd"}}), "optimiser"},
      {"{\"schema_version\": 1, ", "not valid JSON"},
      {"[1, 2]", "JSON object"},
  };
  for (const auto& c : cases) {
    const auto finished = run_program({TS_WORKER_BINARY, "--job", write_job(c.job), "--out", out_path()});
    EXPECT_EQ(finished.exit_code, 2) << c.job << "\n" << finished.err;
    EXPECT_NE(finished.err.find(c.mentioned), std::string::npos) << finished.err;
    EXPECT_FALSE(std::filesystem::exists(out_path())) << c.job;
  }
}

TEST_F(WorkerProcess, TheDefaultCpuMemoryFigureIsTheJobsOwnAndGrowsWithBatchSize) {
  // The timed phase's resident high-water mark above the process's baseline
  // (rss_footprint_bytes, the store's default on CPU): it measures the
  // model's work, so a batch 256 times larger needs visibly more; the
  // process's own baseline (libtorch loaded) is the same for both.
  const auto memory_at = [&](int64_t batch) {
    auto job = testing::tiny_mlp();
    job.update(
        {{"batch_size", batch}, {"input_size", 256}, {"width", 1024}, {"epochs", 1}, {"warmup", 2}, {"iters", 2}});
    const auto finished = run_program({TS_WORKER_BINARY, "--job", write_job(job.dump()), "--out", out_path()});
    EXPECT_EQ(finished.exit_code, 0) << finished.err;
    std::ifstream in(out_path());
    return nlohmann::json::parse(in).at("memory");
  };
  const auto small = memory_at(16);
  const auto large = memory_at(4096);
  EXPECT_EQ(small.at("source"), "rss");
  EXPECT_EQ(large.at("hwm_reset"), true);
  // 4096 x 1024 floats per activation alone is 16 MiB.
  EXPECT_GT(large.at("rss_footprint_bytes").get<int64_t>(), small.at("rss_footprint_bytes").get<int64_t>() + (16 << 20))
      << small.dump() << "\n"
      << large.dump();
  EXPECT_LT(small.at("rss_footprint_bytes").get<int64_t>(), small.at("baseline_rss_bytes").get<int64_t>());
  EXPECT_GE(large.at("warmup_peak_rss_bytes").get<int64_t>(), large.at("baseline_rss_bytes").get<int64_t>());
}

TEST_F(WorkerProcess, BadFlagValuesExitWith2) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{TS_WORKER_BINARY, "--model", "mlp", "--batch-size", "eight", "--out", out_path()},
        std::vector<std::string>{TS_WORKER_BINARY, "--model", "mlp", "--batch-size", "8", "--no-such-flag"},
        std::vector<std::string>{TS_WORKER_BINARY, "--model", "mlp", "--out", out_path()}}) {
    const auto finished = run_program(argv);
    EXPECT_EQ(finished.exit_code, 2) << finished.err;
    EXPECT_FALSE(std::filesystem::exists(out_path()));
  }
}

TEST_F(WorkerProcess, OneOffFlagsPrintAValidResultOnStdout) {
  const auto finished = run_program({TS_WORKER_BINARY,
                                     "--model",
                                     "mlp",
                                     "--batch-size",
                                     "8",
                                     "--input-size",
                                     "16",
                                     "--width",
                                     "32",
                                     "--depth",
                                     "2",
                                     "--num-classes",
                                     "4",
                                     "--epochs",
                                     "2",
                                     "--warmup",
                                     "2",
                                     "--iters",
                                     "3",
                                     "--mode",
                                     "compiled",
                                     "--out",
                                     "-"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  const auto document = nlohmann::json::parse(finished.out);
  EXPECT_TRUE(schema::Validator("result.schema.json").problems(document).empty());
  EXPECT_EQ(document["status"], "ok");
  EXPECT_EQ(document["job"]["mode"], "compiled");
  EXPECT_EQ(document["timing"]["epoch_seconds"].size(), 2u);
}

TEST_F(WorkerProcess, JobOnStdinAndResultFileWrittenAtomically) {
  const auto finished = run_program({TS_WORKER_BINARY, "--job", "-", "--out", out_path()}, testing::tiny_mlp().dump());
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  std::ifstream in(out_path());
  EXPECT_EQ(nlohmann::json::parse(in)["status"], "ok");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory_), std::filesystem::directory_iterator{}),
            1);  // result.json alone: no temporary left over
}

TEST_F(WorkerProcess, UnsupportedJobExitsWith3AndExplainsInTheResult) {
  auto job = testing::tiny_mlp();
  job["precision"] = "fp16";
  const auto finished = run_program({TS_WORKER_BINARY, "--job", write_job(job.dump()), "--out", out_path()});
  EXPECT_EQ(finished.exit_code, 3);
  std::ifstream in(out_path());
  const auto document = nlohmann::json::parse(in);
  EXPECT_EQ(document["status"], "unsupported");
  EXPECT_NE(document["error"].get<std::string>().find("fp16"), std::string::npos);
}

// The one-rank data-parallel path is a CUDA rank's (a one-rank NCCL
// communicator); on the CPU the collective is MPI's, between ranks mpirun
// started, so the job is unsupported and says which to ask instead.
TEST_F(WorkerProcess, DataParallelAlwaysOnTheCpuIsUnsupportedAndSaysWhatRuns) {
  auto job = testing::tiny_mlp();
  job["data_parallel"] = "always";
  const auto finished = run_program({TS_WORKER_BINARY, "--job", write_job(job.dump()), "--out", out_path()});
  EXPECT_EQ(finished.exit_code, 3) << finished.err;
  std::ifstream in(out_path());
  const auto document = nlohmann::json::parse(in);
  EXPECT_EQ(document["status"], "unsupported");
  EXPECT_NE(document["error"].get<std::string>().find("data_parallel: always is for one CUDA rank"), std::string::npos)
      << document["error"];
  EXPECT_EQ(document["job"]["data_parallel"], "always");
}

TEST_F(WorkerProcess, ListModelsPrintsParameterCounts) {
  const auto finished = run_program({TS_WORKER_BINARY, "--list-models"});
  ASSERT_EQ(finished.exit_code, 0);
  EXPECT_NE(finished.out.find("resnet50"), std::string::npos);
  EXPECT_NE(finished.out.find("25557032"), std::string::npos);
  EXPECT_NE(finished.out.find("11689512"), std::string::npos);
}

// The agent keeps a runner's answers while what its --version names is unchanged (agent/node/probe_cache.hpp):
// the worker names the shared libraries it loaded, LibTorch's among them.
TEST_F(WorkerProcess, VersionNamesTheLibrariesItsAnswersDependOn) {
  const auto finished = run_program({TS_WORKER_BINARY, "--version"});
  ASSERT_EQ(finished.exit_code, 0);
  const auto site = finished.out.find("\nsite ");
  ASSERT_NE(site, std::string::npos) << finished.out;
  const auto libraries =
      nlohmann::json::parse(finished.out.substr(site + 6, finished.out.find('\n', site + 1) - site - 6));
  ASSERT_TRUE(libraries.is_array());
  bool torch = false;
  for (const auto& library : libraries) {
    EXPECT_TRUE(std::filesystem::exists(library.get<std::string>())) << library;
    torch = torch || library.get<std::string>().find("libtorch_cpu.so") != std::string::npos;
  }
  EXPECT_TRUE(torch) << libraries;
}

}  // namespace
}  // namespace ts::worker
