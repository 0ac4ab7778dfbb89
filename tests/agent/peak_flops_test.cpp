// The devices' peak: measured by the worker, once, then read from the
// cache while the node's fingerprint holds.
#include "agent/node/peak_flops.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "shared/errors.hpp"
#include "shared/schema.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

class PeakFlops : public ::testing::Test {
 protected:
  // A stand-in worker that counts its probes and prints `output`.
  std::string worker(const std::string& output) {
    const auto path = directory_ / "worker.sh";
    std::ofstream(path) << "#!/bin/sh\necho probe >> '" << (directory_ / "probes").string() << "'\ncat <<'EOF'\n"
                        << output << "\nEOF\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path.string();
  }
  int probes() const {
    std::ifstream in(directory_ / "probes");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  std::filesystem::path cache() const { return directory_ / "peak_flops.json"; }

  testing::TempDirectory directory_{"ts_peak"};
  const nlohmann::json capabilities_{{"hostname", "node-a"},
                                     {"cpu_cores", 2},
                                     {"gpus", nlohmann::json::array()},
                                     {"torch_version", "2.6.0"},
                                     {"cuda_version", nullptr}};
  static constexpr const char* measured =
      R"({"devices": [{"device": "cpu", "name": "Test CPU", "threads": 2, "fp32": 1e11, "bf16": null}]})";
};

TEST_F(PeakFlops, MeasuredOnceThenReadFromTheCacheWhileTheNodeIsTheSame) {
  const auto probe = worker(measured);
  const auto first = peak_flops(PeakProbe::cached, probe, cache(), capabilities_);
  ASSERT_TRUE(first.is_object()) << first.dump();
  EXPECT_EQ(first.at("cached"), false);
  EXPECT_EQ(first.at("devices").at(0).at("fp32"), 1e11);
  const auto second = peak_flops(PeakProbe::cached, probe, cache(), capabilities_);
  EXPECT_EQ(second.at("cached"), true);
  EXPECT_EQ(second.at("measured_at"), first.at("measured_at"));
  EXPECT_EQ(probes(), 1);
  // Another GPU, another torch: measured again.
  auto changed = capabilities_;
  changed["torch_version"] = "2.7.0";
  EXPECT_EQ(peak_flops(PeakProbe::cached, probe, cache(), changed).at("cached"), false);
  EXPECT_EQ(probes(), 2);
  EXPECT_EQ(peak_flops(PeakProbe::fresh, probe, cache(), changed).at("cached"), false);
  EXPECT_EQ(probes(), 3);
}

TEST_F(PeakFlops, OffOrAFailedProbeGivesNoPeakAndNoCache) {
  EXPECT_TRUE(peak_flops(PeakProbe::off, worker(measured), cache(), capabilities_).is_null());
  EXPECT_EQ(probes(), 0);
  EXPECT_TRUE(peak_flops(PeakProbe::cached, worker("not json"), cache(), capabilities_).is_null());
  EXPECT_TRUE(peak_flops(PeakProbe::cached, worker(R"({"devices": []})"), cache(), capabilities_).is_null());
  EXPECT_FALSE(std::filesystem::exists(cache()));
  EXPECT_THROW(parse_peak_probe("sometimes", "--peak-probe"), InvalidInput);
}

// An agent given GPUs 2 and 5 of a node (Slurm's CUDA_VISIBLE_DEVICES)
// measures those, not every GPU of the node, and files each figure under
// the index its jobs name.
TEST_F(PeakFlops, TheProbeSeesOnlyTheAgentsGpusAndTheirFiguresKeepTheirIndices) {
  const auto path = directory_ / "worker.sh";
  std::ofstream(path) << "#!/bin/sh\necho \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\" > '"
                      << (directory_ / "visible").string() << "'\n"
                      << R"(echo '{"devices": [{"device": "cpu", "name": "CPU", "fp32": 1e11, "bf16": null}, )"
                      << R"({"device": "cuda:0", "index": 0, "name": "H200", "fp32": 5e13, "bf16": 7e14}, )"
                      << R"({"device": "cuda:1", "index": 1, "name": "H200", "fp32": 5.1e13, "bf16": 7.1e14}]}')"
                      << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  auto capabilities = capabilities_;
  capabilities["gpus"] = {{{"index", 2}, {"name", "H200"}, {"uuid", "GPU-c"}},
                          {{"index", 5}, {"name", "H200"}, {"uuid", "GPU-f"}}};
  const auto peak = peak_flops(PeakProbe::fresh, path.string(), cache(), capabilities);
  ASSERT_TRUE(peak.is_object());
  std::ifstream seen(directory_ / "visible");
  std::string visible;
  std::getline(seen, visible);
  EXPECT_EQ(visible, "GPU-c,GPU-f PCI_BUS_ID");
  EXPECT_EQ(peak.at("devices").at(1).at("index"), 2);
  EXPECT_EQ(peak.at("devices").at(2).at("index"), 5);
  EXPECT_EQ(peak.at("devices").at(2).at("bf16"), 7.1e14);
  // No GPU given: the probe sees none.
  peak_flops(PeakProbe::fresh, path.string(), cache(), capabilities_);
  std::ifstream none(directory_ / "visible");
  std::getline(none, visible);
  EXPECT_EQ(visible, " PCI_BUS_ID");
}

#ifdef TS_WORKER_BINARY
TEST_F(PeakFlops, TheWorkersProbeMeasuresTheCpuInBothPrecisions) {
  const auto peak = peak_flops(PeakProbe::fresh, TS_WORKER_BINARY, cache(), capabilities_);
  ASSERT_TRUE(peak.is_object()) << "see the log for the probe's error";
  const auto& cpu = peak.at("devices").at(0);
  EXPECT_EQ(cpu.at("device"), "cpu");
  EXPECT_GT(cpu.at("fp32").get<double>(), 1e8) << cpu.dump();
  EXPECT_GT(cpu.at("bf16").get<double>(), 0) << cpu.dump();
}
#endif

}  // namespace
}  // namespace ts::agent
