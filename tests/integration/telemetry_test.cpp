// GPU telemetry through real coordinator and agent processes, on a machine
// without a GPU: a fake nvidia-smi gives the agent one GPU, and the fake
// NVML (tests/agent/fake_nvml.cpp, --nvml-library) reports its clock event
// reasons from $FAKE_NVML_REASONS. What the stored results say, and a job
// that asks discard_if_throttled (docs/gpu-telemetry.md). The energy of a
// GPU job from NVML's counter, of a CPU job from a fake powercap tree
// (--powercap-root) whose counter a thread here advances and wraps.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <thread>

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
  // The fake's counter integrates its 100 W over real time: so do the energy figures.
  const auto energy =
      nlohmann::json::parse(store_rows("SELECT json_extract(document, '$.energy') FROM result_documents"));
  ASSERT_EQ(energy.at("status"), "ok") << energy.dump();
  EXPECT_EQ(energy.at("source"), "nvml");
  EXPECT_NEAR(energy.at("average_power_w").get<double>(), 100.0, 10.0) << energy.dump();
  EXPECT_NEAR(energy.at("power_integral_joules").get<double>(), energy.at("joules").get<double>(),
              0.1 * energy.at("joules").get<double>());
  EXPECT_EQ(store_rows("SELECT energy_source, ABS(joules_per_sample * samples_per_s - average_power_w) < 1e-6 FROM "
                       "results"),
            "nvml|1\n");
}

TEST_F(Telemetry, ACpuJobsEnergyIsThePackagesRaplCounterAcrossItsWraps) {
  // package-0 at 5 W, its counter wrapping at 1 J: every 0.2 s, twice per sample or more apart.
  const auto zone = directory_ / "powercap" / "intel-rapl:0";
  std::filesystem::create_directories(zone);
  std::ofstream(zone / "name") << "package-0\n";
  std::ofstream(zone / "max_energy_range_uj") << "1000000\n";
  std::ofstream(zone / "energy_uj") << "0\n";
  // Stopped and joined when the test ends, however it ends.
  std::jthread counter([&](std::stop_token stop) {
    const auto start = std::chrono::steady_clock::now();
    while (!stop.stop_requested()) {
      const auto microseconds =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
      // Written aside and renamed in, as the kernel's file never reads half-written.
      std::ofstream(zone / "energy_uj.next") << (5 * microseconds) % 1000001 << "\n";
      std::filesystem::rename(zone / "energy_uj.next", zone / "energy_uj");
      std::this_thread::sleep_for(2ms);
    }
  });
  start_coordinator();
  start_agent("cpu-node", {"--runner", "libtorch=" + fake_runner().string(), "--powercap-root",
                           (directory_ / "powercap").string()});
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  const auto file =
      write_file("cpu.yaml", "name: cpu\naxes: {batch_size: [8]}\nfixed: {model: mlp, labels: {sleep: \"1\"}}\n");
  ASSERT_EQ(torchsweep({"submit", file.string(), "--coordinator", endpoint()}).exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return jobs_in("done") == 1; }, 30s)) << status().dump();
  const auto energy =
      nlohmann::json::parse(store_rows("SELECT json_extract(document, '$.energy') FROM result_documents"));
  ASSERT_EQ(energy.at("status"), "ok") << energy.dump();
  EXPECT_EQ(energy.at("source"), "rapl");
  EXPECT_GE(energy.at("counter_wraps").get<int>(), 4) << energy.dump();
  EXPECT_NEAR(energy.at("average_power_w").get<double>(), 5.0, 1.0) << energy.dump();
  EXPECT_TRUE(energy.at("power_integral_joules").is_null());
  EXPECT_EQ(energy.at("domains").at(0).at("name"), "package-0");
  EXPECT_EQ(store_rows("SELECT energy_source FROM results"), "rapl\n");
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
