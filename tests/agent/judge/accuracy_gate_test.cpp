// The accuracy gate's verdict on what a runner measured: each rule of
// agent/judge/accuracy_gate.hpp can pass and can fail, and `accuracy:
// required` turns a failure into a failed job with its timing kept.
#include "agent/judge/accuracy_gate.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace ts::agent {
namespace {

nlohmann::json tensor(const std::string& name, double scaled, std::optional<double> compiled_rmse = {},
                      std::optional<double> eager_rmse = {}, int64_t numel = 100, double cosine = 1.0) {
  return {{"name", name},
          {"numel", numel},
          {"nonfinite_mismatches", 0},
          {"max_scaled_difference", scaled},
          {"cosine", cosine},
          {"compiled_rmse", compiled_rmse ? nlohmann::json(*compiled_rmse) : nlohmann::json()},
          {"eager_rmse", eager_rmse ? nlohmann::json(*eager_rmse) : nlohmann::json()}};
}

nlohmann::json compiled_result(nlohmann::json tensors, const std::string& precision = "fp32",
                               const std::string& accuracy = "check") {
  return {{"status", "ok"},
          {"runner", {{"name", "torch-compile"}, {"version", "1"}}},
          {"job", {{"model", "mlp"}, {"mode", "compiled"}, {"precision", precision}, {"accuracy", accuracy}}},
          {"execution", {{"mode", "compiled"}, {"fallback_reason", nullptr}}},
          {"timing", {{"median_epoch_seconds", 1.0}}},
          {"accuracy", {{"reference", "float64"}, {"reference_note", nullptr}, {"tensors", std::move(tensors)}}},
          {"warnings", nlohmann::json::array()}};
}

TEST(AccuracyGate, WithinAllcloseOrWithinTwiceEagersErrorFromFloat64Passes) {
  // loss: allclose at 1e-4; grad: 3e-3 off eager but no further from float64 than eager is.
  auto result = compiled_result({tensor("loss", 5e-5, 1e-6, 1e-6), tensor("grad:w", 3e-3, 2e-5, 1.5e-5)});
  judge_accuracy(result);
  const auto& accuracy = result.at("accuracy");
  EXPECT_EQ(accuracy.at("status"), "pass");
  EXPECT_EQ(accuracy.at("tolerance"), 1e-4);
  EXPECT_EQ(accuracy.at("worst"), "grad:w");
  EXPECT_NEAR(accuracy.at("deviation").get<double>(), 2e-5 / (2 * 1.5e-5 + 1e-5), 1e-12);
  EXPECT_TRUE(result.at("warnings").empty());
}

TEST(AccuracyGate, FurtherFromFloat64ThanTheRuleAllowsFailsAndWarnsKeepingTheResult) {
  auto result = compiled_result({tensor("output", 1e-6, 1e-7, 1e-7), tensor("grad:w", 0.5, 0.3, 1e-5)});
  judge_accuracy(result);
  const auto& accuracy = result.at("accuracy");
  EXPECT_EQ(accuracy.at("status"), "fail");
  EXPECT_EQ(accuracy.at("worst"), "grad:w");
  EXPECT_GT(accuracy.at("deviation").get<double>(), 1.0);
  ASSERT_EQ(accuracy.at("failed").size(), 1u);
  EXPECT_NE(accuracy.at("failed")[0].get<std::string>().find("grad:w"), std::string::npos);
  EXPECT_EQ(result.at("status"), "ok");
  ASSERT_EQ(result.at("warnings").size(), 1u);
  EXPECT_NE(result.at("warnings")[0].get<std::string>().find("accuracy gate failed"), std::string::npos);
}

TEST(AccuracyGate, RequiredFailsTheJobAndKeepsItsTiming) {
  auto result = compiled_result({tensor("loss", 0.5, 0.3, 1e-5)}, "fp32", "required");
  judge_accuracy(result);
  EXPECT_EQ(result.at("status"), "failed");
  EXPECT_NE(result.at("error").get<std::string>().find("accuracy: required"), std::string::npos);
  EXPECT_TRUE(result.contains("timing"));
}

TEST(AccuracyGate, ReducedPrecisionHasTheWiderTolerance) {
  auto fp32 = compiled_result({tensor("loss", 5e-3)});
  auto bf16 = compiled_result({tensor("loss", 5e-3)}, "bf16");
  judge_accuracy(fp32);
  judge_accuracy(bf16);
  EXPECT_EQ(fp32.at("accuracy").at("status"), "fail");
  EXPECT_EQ(bf16.at("accuracy").at("status"), "pass");
  EXPECT_EQ(bf16.at("accuracy").at("tolerance"), 1e-2);
}

TEST(AccuracyGate, WithoutFloat64OnlyALargeTensorMayPassOnCosineSimilarity) {
  auto small = compiled_result({tensor("output", 0.05, {}, {}, 1000, 0.999)});
  auto large = compiled_result({tensor("output", 0.05, {}, {}, 200000, 0.999)});
  auto dissimilar = compiled_result({tensor("output", 0.05, {}, {}, 200000, 0.9)});
  for (auto* result : {&small, &large, &dissimilar}) judge_accuracy(*result);
  EXPECT_EQ(small.at("accuracy").at("status"), "fail");
  EXPECT_EQ(large.at("accuracy").at("status"), "pass");
  EXPECT_EQ(dissimilar.at("accuracy").at("status"), "fail");
}

TEST(AccuracyGate, ValuesFiniteInOnlyOneOfTheRunsFail) {
  auto t = tensor("output", 0.0, 0.0, 0.0);
  t["nonfinite_mismatches"] = 3;
  auto result = compiled_result({t});
  judge_accuracy(result);
  EXPECT_EQ(result.at("accuracy").at("status"), "fail");
  EXPECT_NE(result.at("accuracy").at("failed")[0].get<std::string>().find("finite"), std::string::npos);
}

TEST(AccuracyGate, AFallbackOrARunnerWithoutTheCheckIsSkippedSayingWhyAndEagerJobsHaveNoGate) {
  auto fell_back = compiled_result(nlohmann::json::array());
  fell_back.erase("accuracy");
  fell_back["execution"] = {{"mode", "eager"}, {"fallback_reason", "inductor failed"}};
  judge_accuracy(fell_back);
  EXPECT_EQ(fell_back.at("accuracy").at("status"), "skipped");
  EXPECT_NE(fell_back.at("accuracy").at("skipped").get<std::string>().find("inductor failed"), std::string::npos);

  auto unchecked = compiled_result(nlohmann::json::array());
  unchecked.erase("accuracy");
  judge_accuracy(unchecked);
  EXPECT_NE(unchecked.at("accuracy").at("skipped").get<std::string>().find("torch-compile runner"), std::string::npos);

  auto eager = compiled_result(nlohmann::json::array());
  eager.erase("accuracy");
  eager["job"]["mode"] = "eager";
  judge_accuracy(eager);
  EXPECT_FALSE(eager.contains("accuracy"));
}

TEST(AccuracyGate, AGenerationIsJudgedByItsTokens) {
  auto result = compiled_result(nlohmann::json::array());
  result.erase("accuracy");
  result["generation"] = {{"matches_eager", false}, {"first_mismatch", 3}};
  judge_accuracy(result);
  EXPECT_EQ(result.at("accuracy").at("status"), "fail");
  EXPECT_NE(result.at("accuracy").at("failed")[0].get<std::string>().find("new token 3"), std::string::npos);
  result = compiled_result(nlohmann::json::array());
  result.erase("accuracy");
  result["generation"] = {{"matches_eager", true}, {"first_mismatch", nullptr}};
  judge_accuracy(result);
  EXPECT_EQ(result.at("accuracy").at("status"), "pass");
}

}  // namespace
}  // namespace ts::agent
