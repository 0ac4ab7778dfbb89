// GPU identity: the GPUs an agent reports are the ones its jobs get.
#include "agent/capabilities.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"

namespace ts::agent {
namespace {

TEST(Capabilities, JobsGetTheirGpusByTheUuidsTheAgentReported) {
  const auto gpus = parse_nvidia_smi(
      "0, NVIDIA A100-SXM4-80GB, 81920, GPU-aaaa\n"
      "1, NVIDIA H100 80GB HBM3, 81559, GPU-bbbb\n"
      "2, NVIDIA H100 80GB HBM3, 81559\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[1].at("uuid"), "GPU-bbbb");
  EXPECT_EQ(visible_devices(gpus, {1, 0}), "GPU-bbbb,GPU-aaaa");
  EXPECT_EQ(visible_devices(gpus, {2}), "2");  // no UUID: the index, in PCI bus order
  EXPECT_THROW(visible_devices(gpus, {7}), InvalidInput);
}

}  // namespace
}  // namespace ts::agent
