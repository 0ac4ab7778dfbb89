#include "agent/judge/accuracy_gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "shared/job_fields.hpp"

namespace ts::agent {
namespace {

constexpr std::size_t kListedFailures = 10;
constexpr int64_t kCosineMinimumValues = 100000;
constexpr double kCosineMinimum = 0.99;

struct Rule {
  double tolerance;
  double multiplier;
};

Rule rule_for(const std::string& precision) {
  if (precision == "fp32") return {1e-4, 2.0};
  return {1e-2, 3.0};  // bf16 and fp16 autocast
}

struct TensorVerdict {
  bool pass = true;
  double deviation = 0.0;
  std::string why;
};

// Each criterion's figure is in units of what it allows, and a tensor
// passes when any criterion does: the nearest of them decided, so it is the
// deviation (at most 1 is a pass, above 1 a failure, whichever decided).
TensorVerdict judge_tensor(const nlohmann::json& tensor, const Rule& rule) {
  if (const auto mismatches = tensor.at("nonfinite_mismatches").get<int64_t>(); mismatches > 0) {
    // No tolerance passes it: as far from passing as a figure can be.
    return {false, std::numeric_limits<double>::max(),
            fmt::format("{} position(s) finite in only one of compiled and eager", mismatches)};
  }
  const double scaled = tensor.at("max_scaled_difference").get<double>();
  double deviation = scaled / rule.tolerance;  // allclose
  std::string why = fmt::format("scaled difference from eager {:.3g}, tolerance {:.3g}", scaled, rule.tolerance);
  if (const auto& compiled_rmse = tensor.at("compiled_rmse"); !compiled_rmse.is_null()) {
    const double allowed = rule.multiplier * tensor.at("eager_rmse").get<double>() + rule.tolerance / 10.0;
    deviation = std::min(deviation, compiled_rmse.get<double>() / allowed);
    why += fmt::format("; RMSE from float64 {:.3g}, allowed {:.3g}", compiled_rmse.get<double>(), allowed);
  } else if (const auto& cosine = tensor.at("cosine");
             tensor.at("numel").get<int64_t>() >= kCosineMinimumValues && !cosine.is_null()) {
    deviation = std::min(deviation, (1.0 - cosine.get<double>()) / (1.0 - kCosineMinimum));
    why += fmt::format("; cosine similarity {:.6g}, at least {}", cosine.get<double>(), kCosineMinimum);
  }
  return {deviation <= 1.0, deviation, why};
}

// What a compiled result without compared tensors says about why.
std::string skipped_reason(const nlohmann::json& result) {
  if (const auto reason = result.at("accuracy").find("skipped"); reason != result.at("accuracy").end()) {
    return reason->get<std::string>();
  }
  const auto& execution = result.value("execution", nlohmann::json::object());
  if (execution.value("mode", std::string()) == "eager") {
    return fmt::format("ran eager: {}", execution.value("fallback_reason", nlohmann::json()).is_string()
                                            ? execution.at("fallback_reason").get<std::string>()
                                            : std::string("no compiled step"));
  }
  return fmt::format("the {} runner does not compare its compiled step with eager",
                     result.at("runner").at("name").get<std::string>());
}

void judge_generation(nlohmann::json& accuracy, const nlohmann::json& generation) {
  const auto& matches = generation.at("matches_eager");
  if (matches.is_null()) {
    accuracy["status"] = "skipped";
    accuracy["skipped"] = "the generation ran eager";
    return;
  }
  accuracy["status"] = matches.get<bool>() ? "pass" : "fail";
  if (!matches.get<bool>()) {
    accuracy["failed"] = {fmt::format("tokens: greedy decoding differs from eager from new token {}",
                                      generation.at("first_mismatch").get<int64_t>())};
  }
}

void judge_tensors(nlohmann::json& accuracy, const Rule& rule) {
  // The worst tensor is the failed one furthest from what the rule allows,
  // else the one nearest to failing.
  struct Worst {
    double deviation = -1.0;
    std::string name;
  } worst, worst_failed;
  std::vector<std::string> failed;
  for (const auto& tensor : accuracy.at("tensors")) {
    const auto verdict = judge_tensor(tensor, rule);
    const auto name = tensor.at("name").get<std::string>();
    auto& track = verdict.pass ? worst : worst_failed;
    if (verdict.deviation > track.deviation) track = {verdict.deviation, name};
    if (!verdict.pass && failed.size() < kListedFailures) failed.push_back(fmt::format("{}: {}", name, verdict.why));
  }
  const auto& chosen = worst_failed.name.empty() ? worst : worst_failed;
  accuracy["deviation"] = std::max(worst.deviation, worst_failed.deviation);
  accuracy["worst"] = chosen.name;
  accuracy["status"] = failed.empty() ? "pass" : "fail";
  accuracy["failed"] = failed;
}

}  // namespace

void judge_accuracy(nlohmann::json& result) {
  if (result.value("status", std::string()) != "ok") return;
  const auto& job = result.at("job");
  if (job_fields::get<std::string>(job, "mode") == "eager") return;
  auto& accuracy = result["accuracy"];
  if (accuracy.is_null()) accuracy = nlohmann::json::object();
  const auto rule = rule_for(job_fields::get<std::string>(job, "precision"));
  accuracy["tolerance"] = rule.tolerance;
  accuracy["deviation"] = nullptr;
  accuracy["worst"] = nullptr;
  if (result.contains("generation")) {
    judge_generation(accuracy, result.at("generation"));
  } else if (accuracy.contains("tensors") && !accuracy.at("tensors").empty()) {
    judge_tensors(accuracy, rule);
  } else {
    accuracy["status"] = "skipped";
    accuracy["skipped"] = skipped_reason(result);
  }
  if (accuracy.at("status") != "fail") return;
  const auto& failed = accuracy.at("failed");
  const auto summary = fmt::format("accuracy gate failed: the compiled step differs from eager ({}{})",
                                   failed.empty() ? std::string("?") : failed.front().get<std::string>(),
                                   failed.size() > 1 ? fmt::format(", and {} more", failed.size() - 1) : "");
  if (job_fields::get<std::string>(job, "accuracy") == "required") {
    result["status"] = "failed";
    result["error"] = summary + "; the job asked for accuracy: required";
  } else {
    result["warnings"].push_back(summary);
  }
}

}  // namespace ts::agent
