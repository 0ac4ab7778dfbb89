// A profile summarized from a runner's trace (agent/trace_summary.hpp): an
// XLA-style Chrome trace made by hand, as the JAX and TensorFlow runners write them.
#include "agent/trace_summary.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "shared/gzip_file.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

nlohmann::json complete(const std::string& name, int pid, int tid, double ts, double dur) {
  return {{"ph", "X"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
}

nlohmann::json named(const std::string& what, int pid, int tid, const std::string& name) {
  nlohmann::json event{{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

// Host process 1 (the step's thread 1, an XLA thread 5); device process 2
// (stream thread 1; XLA's derived "XLA Ops" line, thread 2). Times in µs.
nlohmann::json xla_trace() {
  return {
      {"traceEvents",
       {named("process_name", 1, -1, "/host:CPU"), named("process_name", 2, -1, "/device:GPU:0"),
        named("thread_name", 2, 1, "Stream #13(compute)"), named("thread_name", 2, 2, "XLA Ops"),
        complete("$profiler.py:151 start_trace", 1, 1, 10, 10), complete("ProfilerStep#1", 1, 1, 100, 50),
        complete("ProfilerStep#2", 1, 1, 150, 50), complete("fusion", 1, 1, 110, 40), complete("dot", 1, 1, 120, 20),
        complete("ynn_fusion", 1, 5, 130, 30), complete("fusion_kernel", 2, 1, 150, 20),
        complete("fusion", 2, 2, 150, 20), complete("$profiler.py:271 stop_trace", 1, 1, 300, 5)}}};
}

nlohmann::json row(const nlohmann::json& rows, const std::string& name) {
  for (const auto& entry : rows) {
    if (entry.at("name") == name) return entry;
  }
  throw std::runtime_error("no row " + name + " in " + rows.dump());
}

TEST(TraceSummary, AnXlaTraceGivesTheRowsOfAnyOtherProfile) {
  const testing::TempDirectory directory("trace_summary");
  std::ofstream(directory / "trace.json") << xla_trace().dump();
  gzip_file(directory / "trace.json", directory / "profile.trace.json.gz");
  nlohmann::json result{{"job", {{"job_id", "j"}}},
                        {"warnings", nlohmann::json::array()},
                        {"profile",
                         {{"status", "ok"},
                          {"steps", 2},
                          {"activities", {"cpu", "cuda"}},
                          {"trace", {{"file", "profile.trace.json.gz"}}}}}};
  summarize_trace(result, directory.path());
  const auto& profile = result.at("profile");
  ASSERT_TRUE(profile.contains("operators")) << result.at("warnings").dump();
  const auto& operators = profile.at("operators");
  EXPECT_DOUBLE_EQ(row(operators, "fusion").at("self_cpu_s"), 20e-6 / 2);  // less the dot nested in it
  EXPECT_DOUBLE_EQ(row(operators, "dot").at("self_cpu_s"), 20e-6 / 2);
  EXPECT_DOUBLE_EQ(row(operators, "ynn_fusion").at("self_cpu_s"), 30e-6 / 2);  // its own thread
  EXPECT_DOUBLE_EQ(row(operators, "ProfilerStep*").at("self_cpu_s"), (10e-6 + 50e-6) / 2);
  for (const auto& entry : operators) {
    EXPECT_EQ(entry.at("name").get<std::string>().find("$profiler.py"), std::string::npos)
        << "outside the steps: " << entry.dump();
  }
  ASSERT_EQ(profile.at("kernels").size(), 1u);  // the stream's kernel, not XLA's derived line
  EXPECT_EQ(profile.at("kernels").at(0).at("name"), "fusion_kernel");
  EXPECT_DOUBLE_EQ(profile.at("kernels").at(0).at("device_s"), 20e-6 / 2);
  EXPECT_EQ(profile.at("totals").at("operators"), 4);
  EXPECT_TRUE(result.at("warnings").empty());

  // A summary the runner made itself is kept as it is.
  auto summarized = result;
  summarized["profile"]["operators"] = nlohmann::json::array();
  summarize_trace(summarized, directory.path());
  EXPECT_TRUE(summarized.at("profile").at("operators").empty());
}

TEST(TraceSummary, ATraceThatCannotBeReadLeavesTheSectionAndSaysWhy) {
  const testing::TempDirectory directory("trace_summary_unreadable");
  std::ofstream(directory / "profile.trace.json.gz") << "not gzip at all";
  nlohmann::json result{
      {"job", {{"job_id", "j"}}},
      {"warnings", nlohmann::json::array()},
      {"profile",
       {{"status", "ok"}, {"steps", 1}, {"activities", {"cpu"}}, {"trace", {{"file", "profile.trace.json.gz"}}}}}};
  const auto before = result.at("profile");
  summarize_trace(result, directory.path());
  EXPECT_EQ(result.at("profile"), before);
  ASSERT_EQ(result.at("warnings").size(), 1u);
  EXPECT_NE(result.at("warnings").at(0).get<std::string>().find("the trace could not be read"), std::string::npos);
}

}  // namespace
}  // namespace ts::agent
