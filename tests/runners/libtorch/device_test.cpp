// The device layer against fakes a CPU can hold: which GPU each rank makes
// current on a node of several (issue 32, defect 1: no rank set its device,
// so a rank on cuda:i recorded its events on GPU 0), and that the device
// clocks make no marks inside timed steps (defect 7: CUDA events were made
// in every step of the data-parallel path).
#include "runners/libtorch/device.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace ts::worker {
namespace {

class FakeCudaDevices final : public CudaDevices {
 public:
  explicit FakeCudaDevices(int count) : count_(count) {}
  int count() const override { return count_; }
  void make_current(int index) override { made_current.push_back(index); }
  std::string why_none() const override { return "the fake node has no GPU"; }

  std::vector<int> made_current;

 private:
  int count_;
};

TEST(DeviceSelection, EachRankOfADataParallelJobMakesItsLocalRanksGpuCurrent) {
  for (int rank = 0; rank < 4; ++rank) {
    FakeCudaDevices node(4);
    const auto device = resolve_device(rank_device("cuda", rank, 4), node);
    EXPECT_EQ(device.str(), "cuda:" + std::to_string(rank));
    EXPECT_EQ(node.made_current, std::vector<int>{rank}) << "rank " << rank;
  }
}

// data_parallel: always on cuda:3 ran on GPU 0 (the local rank's) before.
TEST(DeviceSelection, AOneRankJobMakesItsOwnDeviceCurrent) {
  FakeCudaDevices node(4);
  EXPECT_EQ(resolve_device(rank_device("cuda:3", 0, 1), node).str(), "cuda:3");
  EXPECT_EQ(resolve_device(rank_device("cuda", 0, 1), node).str(), "cuda:0");
  EXPECT_EQ(node.made_current, (std::vector<int>{3, 0}));
}

TEST(DeviceSelection, ARankBeyondTheVisibleGpusIsUnsupportedAndSelectsNothing) {
  FakeCudaDevices node(2);
  try {
    resolve_device(rank_device("cuda", 3, 4), node);
    FAIL() << "rank 3 of 4 on a node that shows 2 GPUs";
  } catch (const Unsupported& error) {
    EXPECT_EQ(std::string(error.what()), "device cuda:3: only 2 CUDA device(s) visible");
  }
  EXPECT_TRUE(node.made_current.empty());
}

TEST(DeviceSelection, NoVisibleGpuIsUnsupportedWithItsReason) {
  FakeCudaDevices node(0);
  try {
    resolve_device("cuda", node);
    FAIL() << "a node without GPUs";
  } catch (const Unsupported& error) {
    EXPECT_EQ(std::string(error.what()), "device cuda: the fake node has no GPU");
  }
  EXPECT_TRUE(node.made_current.empty());
}

TEST(DeviceSelection, TheCpuMakesNoGpuCurrent) {
  FakeCudaDevices node(4);
  EXPECT_TRUE(resolve_device(rank_device("cpu", 1, 2), node).is_cpu());
  EXPECT_TRUE(node.made_current.empty());
}

TEST(DeviceSelection, ARanksGpuIsItsLocalRanksAndAOneRankJobKeepsItsOwn) {
  EXPECT_EQ(rank_device("cuda:3", 0, 1), "cuda:3");
  EXPECT_EQ(rank_device("cuda", 0, 1), "cuda");
  EXPECT_EQ(rank_device("cuda", 2, 4), "cuda:2");
  EXPECT_EQ(rank_device("cuda:3", 1, 8), "cuda:1");
  EXPECT_EQ(rank_device("cpu", 1, 2), "cpu");
}

// This build's own runtime: a CPU-only LibTorch says so.
TEST(DeviceSelection, TheWorkersRuntimeCountsWhatLibTorchSees) {
  const auto devices = cuda_devices();
  EXPECT_EQ(devices->count(), static_cast<int>(torch::cuda::device_count()));
  if (devices->count() == 0) {
    EXPECT_FALSE(devices->why_none().empty());
  }
}

// A device timeline that counts what is made and when.
class CountingTimeline final : public DeviceTimeline {
 public:
  struct Marks final : TimelineMarks {
    void begin() override {}
    void end() override {}
    double seconds() override { return 0.25; }
  };
  std::unique_ptr<TimelineMarks> make_marks() override {
    ++made;
    return std::make_unique<Marks>();
  }
  void synchronize() override { ++synchronized; }
  std::string clock_name() const override { return "counting"; }

  int made = 0, synchronized = 0;
};

TEST(DeviceClocks, AStepClockMakesEveryStepsMarksBeforeTheTimedEpochs) {
  auto timeline = std::make_shared<CountingTimeline>();
  auto clock = make_step_clock(timeline, 5);
  EXPECT_EQ(timeline->made, 5);
  for (int epoch = 0; epoch < 3; ++epoch) {
    clock->begin_epoch();
    for (int step = 0; step < 5; ++step) {
      clock->begin_step();
      clock->end_step();
    }
    const auto synchronized = timeline->synchronized;
    const auto times = clock->end_epoch();
    EXPECT_EQ(timeline->synchronized, synchronized + 1) << "the epoch's end waits for the device";
    EXPECT_EQ(times.step_seconds, std::vector<double>(5, 0.25));
  }
  EXPECT_EQ(timeline->made, 5) << "marks were made inside timed steps";
  EXPECT_EQ(clock->name(), "counting");
}

TEST(DeviceClocks, AStepBeyondThoseAnnouncedMakesItsMarksAsALastResort) {
  auto timeline = std::make_shared<CountingTimeline>();
  auto clock = make_step_clock(timeline, 2);
  clock->begin_epoch();
  for (int step = 0; step < 3; ++step) {
    clock->begin_step();
    clock->end_step();
  }
  EXPECT_EQ(clock->end_epoch().step_seconds.size(), 3u);
  EXPECT_EQ(timeline->made, 3);
}

TEST(DeviceClocks, AnIntervalTimerReusesItsMarksAcrossTakes) {
  auto timeline = std::make_shared<CountingTimeline>();
  auto timer = make_interval_timer(timeline, 4);
  EXPECT_EQ(timeline->made, 4);
  for (int take = 0; take < 3; ++take) {
    for (int interval = 0; interval < 4; ++interval) {
      timer->begin();
      timer->end();
    }
    EXPECT_EQ(timer->take(), std::vector<double>(4, 0.25));
  }
  EXPECT_EQ(timeline->made, 4) << "marks were made inside timed steps";
}

}  // namespace
}  // namespace ts::worker
