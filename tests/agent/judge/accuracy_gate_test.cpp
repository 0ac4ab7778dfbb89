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

// A compiled output carrying a systematic 1e-4 relative error was stored
// `accuracy: pass` with deviation 1.085: allclose passed it, while the
// figure reported was the float64 rule's. The deviation is the figure of
// the criterion that decided, so above 1 is always a failure and a pass is
// never above 1, whichever criterion decided.
TEST(AccuracyGate, TheDeviationIsTheDecidingCriterionsSoAbove1AlwaysFails) {
  // Within allclose (0.9 of tol), further from float64 than the rule allows (1.085).
  auto allclose = compiled_result({tensor("output", 0.9e-4, 1.085 * (2 * 1e-6 + 1e-5), 1e-6)});
  judge_accuracy(allclose);
  EXPECT_EQ(allclose.at("accuracy").at("status"), "pass");
  EXPECT_NEAR(allclose.at("accuracy").at("deviation").get<double>(), 0.9, 1e-12);
  // Outside allclose (3x tol), within the float64 rule (0.5): the float64 rule decided.
  auto float64 = compiled_result({tensor("output", 3e-4, 0.5 * (2 * 1e-6 + 1e-5), 1e-6)});
  judge_accuracy(float64);
  EXPECT_EQ(float64.at("accuracy").at("status"), "pass");
  EXPECT_NEAR(float64.at("accuracy").at("deviation").get<double>(), 0.5, 1e-12);
  // Both fail: the nearer to passing is how far it is from passing.
  auto both = compiled_result({tensor("output", 3e-4, 2.0 * (2 * 1e-6 + 1e-5), 1e-6)});
  judge_accuracy(both);
  EXPECT_EQ(both.at("accuracy").at("status"), "fail");
  EXPECT_NEAR(both.at("accuracy").at("deviation").get<double>(), 2.0, 1e-12);
  // Without float64, a large tensor passing on cosine similarity 0.999: (1 - 0.999) / (1 - 0.99).
  auto cosine = compiled_result({tensor("output", 0.05, {}, {}, 200000, 0.999)});
  judge_accuracy(cosine);
  EXPECT_EQ(cosine.at("accuracy").at("status"), "pass");
  EXPECT_NEAR(cosine.at("accuracy").at("deviation").get<double>(), 0.1, 1e-9);
  // A value finite on one side only: no tolerance passes it.
  auto t = tensor("output", 0.0, 0.0, 0.0);
  t["nonfinite_mismatches"] = 3;
  auto nonfinite = compiled_result({t});
  judge_accuracy(nonfinite);
  EXPECT_GT(nonfinite.at("accuracy").at("deviation").get<double>(), 1.0);
  // Over many tensors: pass means every deviation is at most 1, the worst reported.
  for (int planted = 0; planted < 200; ++planted) {
    const double scaled = 1e-6 * planted * 1.7, rmse = 1e-7 * planted * 1.3;
    auto result = compiled_result({tensor("a", scaled, rmse, 1e-6), tensor("b", scaled / 2, rmse * 2, 1e-6)});
    judge_accuracy(result);
    const auto deviation = result.at("accuracy").at("deviation").get<double>();
    EXPECT_EQ(result.at("accuracy").at("status") == "pass", deviation <= 1.0) << scaled << " " << rmse;
  }
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
