#include "readers/why_section.hpp"

#include <filesystem>

#include "readers/explanation.hpp"
#include "readers/labels.hpp"
#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "store/configuration.hpp"

namespace ts::readers {
namespace {

using nlohmann::json;

constexpr std::size_t top_rows = 5;

// A side of `row`'s configuration: its axis values but `axis_left_out`, plus `extra`.
ExplainSideSpec side_of(const json& row, const std::string& axis_left_out,
                        std::vector<std::pair<std::string, std::string>> extra) {
  ExplainSideSpec side;
  for (const auto& axis : store::configuration_axes()) {
    if (axis.name == axis_left_out || !row.contains(axis.name) || row.at(axis.name).is_null()) continue;
    side.where.emplace_back(axis.name, json_text(row.at(axis.name)));
  }
  for (auto& pair : extra) side.where.push_back(std::move(pair));
  for (const auto& [key, value] : side.where) side.text += (side.text.empty() ? "" : ",") + key + "=" + value;
  return side;
}

std::string link_to(const json& trace, const std::string& page_folder) {
  if (!trace.contains("path") || !trace.value("present", false)) return "";
  const std::filesystem::path path(trace.at("path").get<std::string>());
  if (page_folder.empty()) return path.string();
  return std::filesystem::relative(std::filesystem::absolute(path), std::filesystem::absolute(page_folder)).string();
}

// The explanation of `options` trimmed for the page, or null when a side has no profile (or no single
// configuration) to explain.
json entry(Database& database, ExplainOptions options, const std::string& kind, const std::string& title,
           const WhyInputs& inputs) {
  options.top = top_rows;
  options.artifacts = inputs.artifacts;
  json explanation;
  try {
    explanation = explain(database, options);
  } catch (const InvalidInput&) {
    return nullptr;
  }
  json sides = json::array();
  for (const auto& side : explanation.at("sides")) {
    sides.push_back({{"side", side.at("side")},
                     {"spec", side.at("spec")},
                     {"profiled_runs", side.at("profiled_runs")},
                     {"trace", link_to(side.at("trace"), inputs.page_folder)}});
  }
  return {{"kind", kind},
          {"title", title},
          {"sides", sides},
          {"time", explanation.at("time")},
          {"timed", explanation.at("timed")},
          {"reconciliation", explanation.at("reconciliation")},
          {"operators", explanation.at("operators")},
          {"kernels", explanation.at("kernels")}};
}

}  // namespace

ExplainOptions regression_explanation(const json& row, const ResultFilter& current, const std::string& baseline_id) {
  ExplainOptions options;
  options.filter = current;
  auto baseline = side_of(row, "", {});
  baseline.sweeps = {baseline_id};
  baseline.text = "sweep=" + baseline_id;
  auto now = side_of(row, "", {});
  now.text = "this sweep";
  options.sides = {baseline, now};
  return options;
}

bool explained_regression(const json& row) {
  const auto classification = row.value("classification", json(nullptr));
  // Not those its reruns did not reproduce (unconfirmed, suspicious).
  return row.value("verdict", json(nullptr)) == "regressed" &&
         (classification.is_null() || classification == "confirmed" || classification == "flagged");
}

json why_section(Database& database, const WhyInputs& inputs) {
  json entries = json::array();
  int64_t without = 0;
  const auto add = [&](const ExplainOptions& options, const std::string& kind, const std::string& title) {
    auto explained = entry(database, options, kind, title, inputs);
    if (explained.is_null()) {
      ++without;
    } else {
      entries.push_back(std::move(explained));
    }
  };
  const auto pair_axes = configuration_axes_without("mode");
  if (inputs.by_mode != nullptr) {
    for (const auto& row : row_objects(*inputs.by_mode)) {
      if (row.value("runs:eager", json(0)) == 0 || row.value("runs:compiled", json(0)) == 0) continue;
      ExplainOptions options;
      options.filter = inputs.filter;
      options.sides = {side_of(row, "mode", {{"mode", "eager"}}), side_of(row, "mode", {{"mode", "compiled"}})};
      add(options, "compiled vs eager", label_of(row, pair_axes));
    }
  }
  if (inputs.regressions != nullptr) {
    for (const auto& row : inputs.regressions->at("rows")) {
      if (!explained_regression(row)) continue;
      add(regression_explanation(row, inputs.filter, inputs.baseline_id),
          row.value("classification", json(nullptr)) == "confirmed" ? "confirmed regression" : "flagged regression",
          label_of(row, configuration_axes()));
    }
  }
  return {{"entries", entries}, {"without_profiles", without}};
}

}  // namespace ts::readers
