// The profile summary's arithmetic (shared/profiles/summary.hpp) on events
// made by hand: nesting, kernels, shapes and the tables' limits.
#include <gtest/gtest.h>

#include "shared/profiles/summary.hpp"

namespace ts::profiles {
namespace {

ProfiledEvent host(std::string name, uint64_t thread, uint64_t start, uint64_t end, uint64_t correlation = 0) {
  return {std::move(name), false, false, thread, start, end, correlation, 0, ""};
}

nlohmann::json row(const nlohmann::json& rows, const std::string& name) {
  for (const auto& entry : rows) {
    if (entry.at("name") == name) return entry;
  }
  throw std::runtime_error("no row " + name + " in " + rows.dump());
}

TEST(ProfileSummary, SelfTimeIsTimeLessWhatNestsInItOnItsThread) {
  // Thread 1: outer [0, 1000) holds mm [100, 400) and add [500, 900), which
  // holds copy [600, 700); thread 2's mm [0, 300) nests in nothing.
  const std::vector<ProfiledEvent> events{host("outer", 1, 0, 1000), host("aten::mm", 1, 100, 400),
                                          host("aten::add", 1, 500, 900), host("aten::copy_", 1, 600, 700),
                                          host("aten::mm", 2, 0, 300)};
  const auto summary = summarize_profile(events, 2, false, false);
  const auto& operators = summary.at("operators");
  EXPECT_DOUBLE_EQ(row(operators, "outer").at("self_cpu_s"), (1000 - 300 - 400) / 1e9 / 2);
  EXPECT_DOUBLE_EQ(row(operators, "outer").at("cpu_total_s"), 1000 / 1e9 / 2);
  EXPECT_DOUBLE_EQ(row(operators, "aten::add").at("self_cpu_s"), 300 / 1e9 / 2);
  EXPECT_DOUBLE_EQ(row(operators, "aten::mm").at("self_cpu_s"), 600 / 1e9 / 2);
  EXPECT_DOUBLE_EQ(row(operators, "aten::mm").at("calls"), 1.0);  // two calls over two steps
  // The most self time first, ties by name.
  std::vector<std::string> order;
  for (const auto& entry : operators) order.push_back(entry.at("name"));
  EXPECT_EQ(order, (std::vector<std::string>{"aten::mm", "aten::add", "outer", "aten::copy_"}));
  // Self times add up to the threads' busy time: nothing counted twice.
  EXPECT_DOUBLE_EQ(summary.at("totals").at("self_cpu_s"), (1000 + 300) / 1e9 / 2);
  EXPECT_EQ(summary.at("totals").at("operators"), 4);
  EXPECT_FALSE(summary.contains("operator_shapes"));
}

TEST(ProfileSummary, AKernelCountsTowardsTheOperatorThatLaunchedItAndThoseAroundIt) {
  auto kernel = [](std::string name, uint64_t start, uint64_t end, uint64_t launched_by) {
    return ProfiledEvent{std::move(name), true, false, 7, start, end, 0, launched_by, ""};
  };
  const std::vector<ProfiledEvent> events{host("aten::linear", 1, 0, 1000, 10), host("aten::addmm", 1, 100, 900, 11),
                                          kernel("gemm", 2000, 2500, 11), kernel("gemm", 3000, 3300, 11),
                                          kernel("orphan", 4000, 4100, 99)};
  const auto summary = summarize_profile(events, 1, false, true);
  const auto addmm = row(summary.at("operators"), "aten::addmm");
  EXPECT_DOUBLE_EQ(addmm.at("self_device_s"), 800 / 1e9);
  EXPECT_DOUBLE_EQ(addmm.at("device_total_s"), 800 / 1e9);
  const auto linear = row(summary.at("operators"), "aten::linear");
  EXPECT_DOUBLE_EQ(linear.at("self_device_s"), 0.0);
  EXPECT_DOUBLE_EQ(linear.at("device_total_s"), 800 / 1e9);
  EXPECT_EQ(summary.at("operators").front().at("name"), "aten::addmm");  // by device time on a GPU
  const auto gemm = row(summary.at("kernels"), "gemm");
  EXPECT_DOUBLE_EQ(gemm.at("calls"), 2.0);
  EXPECT_DOUBLE_EQ(gemm.at("device_s"), 800 / 1e9);
  EXPECT_EQ(summary.at("kernels").front().at("name"), "gemm");
  EXPECT_EQ(summary.at("totals").at("kernels"), 2);
  EXPECT_DOUBLE_EQ(summary.at("totals").at("kernel_s"), 900 / 1e9);
  EXPECT_DOUBLE_EQ(summary.at("totals").at("self_device_s"), 800 / 1e9);
}

TEST(ProfileSummary, ShapesGetRowsOfTheirOwnAndTheTablesKeepTheirLimit) {
  std::vector<ProfiledEvent> events;
  for (uint64_t i = 0; i < 5; ++i) {
    auto event = host("op" + std::to_string(i), 1, 100 * i, 100 * i + 10 * (i + 1));
    event.input_shapes = i % 2 == 0 ? "[[8, 32]]" : "[[4]]";
    events.push_back(event);
  }
  events.push_back(events.back());  // op4 again, other shapes, no time
  events.back().input_shapes = "[[4]]";
  events.back().start_ns = events.back().end_ns = 900;
  auto async = host("async", 3, 0, 500);
  async.async = true;
  events.push_back(async);
  const auto summary = summarize_profile(events, 1, true, false, {3, 2, 3});
  EXPECT_EQ(summary.at("operators").size(), 3u);
  EXPECT_EQ(summary.at("operators").front().at("name"), "async");  // an async event's time is all its own
  EXPECT_EQ(summary.at("totals").at("operators"), 6);
  const auto& shapes = summary.at("operator_shapes");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes.at(1).at("name"), "op4");
  EXPECT_EQ(shapes.at(1).at("input_shapes"), "[[8, 32]]");
  EXPECT_FALSE(summary.at("operators").front().contains("input_shapes"));
  // The step marks are one row, as key_averages() makes them.
  const auto steps =
      summarize_profile({host("ProfilerStep#1", 1, 0, 10), host("ProfilerStep#2", 1, 10, 30)}, 2, false, false);
  ASSERT_EQ(steps.at("operators").size(), 1u);
  EXPECT_EQ(steps.at("operators").at(0).at("name"), "ProfilerStep*");
  EXPECT_DOUBLE_EQ(steps.at("operators").at(0).at("calls"), 1.0);
  // torch.profiler's bookkeeping and memory records are no rows, and nest nothing.
  const auto filtered = summarize_profile(
      {host("aten::mm", 1, 0, 100), host("[memory]", 1, 10, 20), host("aten::is_leaf", 1, 30, 40)}, 1, false, false);
  ASSERT_EQ(filtered.at("operators").size(), 1u);
  EXPECT_EQ(filtered.at("operators").at(0).at("name"), "aten::mm");
  EXPECT_DOUBLE_EQ(filtered.at("operators").at(0).at("self_cpu_s"), 100 / 1e9);
}

}  // namespace
}  // namespace ts::profiles
