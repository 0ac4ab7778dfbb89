// The agent's judgement of a generation: the median prefill, the decode
// tokens per second and the per-token decode latency from the raw times.
#include "agent/judge/generation_summary.hpp"

#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "agent/judge/timing_summary.hpp"

namespace ts::agent {
namespace {

nlohmann::json generation_result() {
  // batch 4, new_tokens 4: three decode steps a generation, three generations
  return {{"status", "ok"},
          {"job", {{"model", "gpt"}, {"batch_size", 4}, {"task", "generate"}, {"seq_len", 64}, {"warmup", 2}}},
          {"timing",
           {{"iterations_per_epoch", 3},
            {"epoch_seconds", {1.0, 1.2, 1.1}},
            {"step_seconds", {{0.1, 0.1, 0.2}, {0.2, 0.2, 0.2}, {0.1, 0.3, 0.1}}}}},
          {"generation", {{"prompt_len", 16}, {"new_tokens", 4}, {"prefill_seconds", {0.5, 0.7, 0.6}}}},
          {"warnings", nlohmann::json::array()}};
}

TEST(GenerationSummary, PrefillDecodeThroughputAndLatencyFromTheRawTimes) {
  auto document = generation_result();
  summarize_timing(document);
  summarize_generation(document);
  const auto& generation = document.at("generation");
  EXPECT_DOUBLE_EQ(generation.at("prefill_seconds_median").get<double>(), 0.6);
  // decode seconds per generation 0.4, 0.6, 0.5: median 0.5 for 4 x 3 tokens
  EXPECT_DOUBLE_EQ(generation.at("decode_tokens_per_second").get<double>(), 12 / 0.5);
  EXPECT_DOUBLE_EQ(document.at("timing").at("tokens_per_second").get<double>(), 12 / 0.5);
  EXPECT_DOUBLE_EQ(generation.at("decode_latency").at("p50").get<double>(), 0.2);  // the middle of the 9 steps
  EXPECT_GE(generation.at("decode_latency").at("p99").get<double>(),
            generation.at("decode_latency").at("p90").get<double>());
  // A generation's samples are its sequences: 4 of them in the median 1.1 s.
  EXPECT_DOUBLE_EQ(document.at("timing").at("samples_per_second").get<double>(), 4 / 1.1);
}

TEST(GenerationSummary, AGenerationHasNoMfuAndOtherResultsAreLeftAlone) {
  auto document = generation_result();
  judge(document, JudgeInputs{});
  EXPECT_FALSE(document.contains("efficiency"));
  EXPECT_TRUE(document.at("generation").contains("decode_latency"));
  nlohmann::json training{{"status", "ok"}, {"timing", {{"epoch_seconds", {1.0}}}}};
  summarize_generation(training);
  EXPECT_FALSE(training.contains("generation"));
}

}  // namespace
}  // namespace ts::agent
