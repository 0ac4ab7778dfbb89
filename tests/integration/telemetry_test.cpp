// GPU telemetry through real coordinator and agent processes, on a machine
// without a GPU: a fake nvidia-smi gives the agent one GPU, and the fake
// NVML (tests/agent/fake_nvml.cpp, --nvml-library) reports its clock event
// reasons from $FAKE_NVML_REASONS. What the stored results say, and a job
// that asks discard_if_throttled (docs/gpu-telemetry.md).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Telemetry : public testing::Cluster {
 protected:
  void TearDown() override {
    Cluster::TearDown();
    ::setenv("PATH", path_.c_str(), 1);
    ::unsetenv("FAKE_NVML_REASONS");
  }
  // An agent with one fake GPU whose NVML reports `reasons` throughout.
  void start_gpu_agent(const std::string& reasons) {
    const auto bin = directory_ / "bin";
    std::filesystem::create_directories(bin);
    std::ofstream(bin / "nvidia-smi") << "#!/bin/sh\necho '0, Fake H200, 143771, GPU-fake-0'\n";
    std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
    ::setenv("PATH", (bin.string() + ":" + path_).c_str(), 1);
    ::setenv("FAKE_NVML_REASONS", reasons.c_str(), 1);
    start_coordinator();
    start_agent("gpu-node", {"--runner", "libtorch=" + fake_runner().string(), "--nvml-library", TS_FAKE_NVML});
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  }
  void submit(const std::string& name, bool discard) {
    const auto file = write_file(
        name + ".yaml",
        "name: " + name +
            "\naxes: {batch_size: [8]}\nfixed: {model: mlp, device: cuda, gpus: 1, labels: {sleep: \"0.4\"}, "
            "discard_if_throttled: " +
            (discard ? "true" : "false") + "}\nmax_attempts: 2\n");
    const auto submitted = torchsweep({"submit", file.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
  const std::string path_ = std::getenv("PATH");
};

TEST_F(Telemetry, ResultsCarryTheGpusTelemetryAndThePowerCapIsNotThrottling) {
  start_gpu_agent("0x4");
  submit("capped", /*discard=*/true);
  ASSERT_TRUE(wait_for([&] { return jobs_in("done") == 1; }, 30s)) << status().dump();
  const auto telemetry =
      nlohmann::json::parse(store_rows("SELECT json_extract(document, '$.telemetry') FROM result_documents"));
  EXPECT_EQ(telemetry.at("status"), "ok") << telemetry.dump();
  EXPECT_EQ(telemetry.at("driver"), "580.65.06-fake");
  // The driver's own version (NVML's), not the CUDA driver API version a runner can read.
  EXPECT_EQ(store_rows("SELECT json_extract(document, '$.context.gpu_driver') FROM result_documents"),
            "580.65.06-fake\n");
  EXPECT_GE(telemetry.at("samples").get<int>(), 1);
  const auto& gpu = telemetry.at("gpus").at(0);
  EXPECT_EQ(gpu.at("uuid"), "GPU-fake-0");
  EXPECT_EQ(gpu.at("clock_event_reasons"), nlohmann::json::array({"sw_power_cap"}));
  EXPECT_EQ(store_rows("SELECT throttled FROM results"), "0\n");
  // No process of this job on the fake GPU: NVML's memory figure is 0, not missing.
  EXPECT_EQ(store_rows("SELECT gpu_process_memory_bytes FROM results"), "0\n");
}

TEST_F(Telemetry, AThrottledRunOfADiscardingJobIsRetriedAndNeverStored) {
  start_gpu_agent("0x40");  // hardware thermal slowdown
  submit("hot", /*discard=*/true);
  ASSERT_TRUE(wait_for([&] { return jobs_in("failed") == 1; }, 30s)) << status().dump();
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM results"), "0\n");
  const auto job = store_rows("SELECT attempts, last_error FROM jobs");
  EXPECT_EQ(job.substr(0, 2), "2|") << job;
  EXPECT_NE(job.find("a GPU throttled during the timed epochs and the job asks discard_if_throttled: GPU 0 "
                     "(GPU-fake-0) [\"hw_thermal_slowdown\"]"),
            std::string::npos)
      << job;

  // Without the knob the run is kept, marked, and the query can leave it out.
  submit("hot-kept", /*discard=*/false);
  ASSERT_TRUE(wait_for([&] { return jobs_in("done", 1) == 1; }, 30s)) << status().dump();
  EXPECT_EQ(store_rows("SELECT throttled FROM results"), "1\n");
  const auto kept = torchsweep({"query", "--db", db().string(), "--where", "throttled=yes", "--format", "json"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(kept.out).size(), 1u) << kept.out;
  const auto left_out = torchsweep({"query", "--db", db().string(), "--where", "throttled=no", "--format", "json"});
  ASSERT_EQ(left_out.exit_code, 0) << left_out.err;
  EXPECT_EQ(nlohmann::json::parse(left_out.out).size(), 0u) << left_out.out;
}

}  // namespace
}  // namespace ts
