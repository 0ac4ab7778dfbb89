// The judged result's summary: exactly the columns the store takes, and
// every figure the store keeps that is derived from the document.
#include "agent/judge/summary.hpp"

#include <gtest/gtest.h>

#include <set>

#include "simulation/synthetic_result.hpp"
#include "store/result_columns.hpp"

namespace ts::agent {
namespace {

using simulation::make_result;

TEST(Summary, HasExactlyTheColumnsTheStoreTakesFromAResult) {
  std::set<std::string> expected;
  for (const auto& column : store::result_columns().columns) {
    if (!column.filled_by_store) expected.insert(column.name);
  }
  std::set<std::string> keys;
  const auto summary = summary_of(make_result({}));
  for (const auto& [key, value] : summary.items()) keys.insert(key);
  EXPECT_EQ(keys, expected);
}

TEST(Summary, DerivesCompileTimeDeviceAndFrameworkOnce) {
  auto result = make_result({.mode = "compiled"});
  result["execution"]["capture_seconds"] = 0.25;  // first iteration 0.5
  EXPECT_DOUBLE_EQ(summary_of(result).at("compile_s").get<double>(), 0.75);
  EXPECT_EQ(summary_of(result).at("device_name"), "Test CPU");
  result["job"]["device"] = "cuda";
  result["context"]["gpus"] = {{{"index", 0}, {"name", "NVIDIA H200"}}};
  EXPECT_EQ(summary_of(result).at("device_name"), "NVIDIA H200");
  result["context"]["torch_version"] = nullptr;
  result["context"]["framework"] = {{"name", "jax"}, {"version", "0.4.38"}};
  EXPECT_EQ(summary_of(result).at("torch_version"), "jax 0.4.38");
}

TEST(Summary, TheMemoryFigureAndItsWarmupReadingNameTheirFields) {
  auto cpu = make_result({.peak_bytes = 1000});
  cpu["memory"]["rss_footprint_bytes"] = 400;
  cpu["memory"]["warmup_peak_rss_bytes"] = 900;
  auto summary = summary_of(cpu);
  EXPECT_EQ(summary.at("peak_memory_bytes"), 400);  // the footprint before the process's peak
  EXPECT_EQ(summary.at("peak_memory_field"), "rss_footprint_bytes");
  EXPECT_EQ(summary.at("warmup_peak_memory_bytes"), 900);
  EXPECT_EQ(summary.at("warmup_peak_memory_field"), "warmup_peak_rss_bytes");
  auto gpu = make_result({});
  gpu["memory"] = {{"source", "cuda_allocator"}, {"peak_reserved_bytes", 300}, {"warmup_peak_allocated_bytes", 200}};
  summary = summary_of(gpu);
  EXPECT_EQ(summary.at("peak_memory_bytes"), 300);  // no peak allocated: reserved
  EXPECT_EQ(summary.at("peak_memory_field"), "peak_reserved_bytes");
  EXPECT_EQ(summary.at("warmup_peak_memory_field"), "warmup_peak_allocated_bytes");
  EXPECT_TRUE(summary.at("gpu_process_memory_bytes").is_null());  // no telemetry
  gpu["telemetry"] = {
      {"throttled", false},
      {"gpus", {{{"process_memory_bytes", {{"max", 5e8}}}}, {{"process_memory_bytes", {{"max", 7e8}}}}}}};
  EXPECT_EQ(summary_of(gpu).at("gpu_process_memory_bytes"), 700000000);  // the busiest GPU's
  EXPECT_EQ(summary_of(gpu).at("throttled"), false);
}

TEST(Summary, OnlyAModelThatReadsTokensHasASequenceLength) {
  auto result = make_result({.model = "mlp"});
  result["job"]["seq_len"] = 128;
  EXPECT_TRUE(summary_of(result).at("seq_len").is_null());
  result["job"]["model"] = "gpt";
  EXPECT_EQ(summary_of(result).at("seq_len"), 128);
}

}  // namespace
}  // namespace ts::agent
