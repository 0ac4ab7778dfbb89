#include "shared/sweep/suites.hpp"

#include <algorithm>

#include "shared/closest_names.hpp"
#include "shared/embedded_files.hpp"
#include "shared/errors.hpp"
#include "shared/schema.hpp"

namespace ts::sweep {
namespace {

constexpr std::string_view folder = "suites/";

bool is_suite_reference(const nlohmann::json& value) {
  return value.is_object() && value.size() == 1 && value.contains("suite");
}

// The suite `reference` names, validated; `field` is where it stands in the sweep.
nlohmann::json suite(const nlohmann::json& reference, const std::string& field, const std::string& origin) {
  static const schema::Validator validator("suite.schema.json");
  if (!reference.at("suite").is_string()) throw InvalidInput(field + ".suite", "expected a suite's name", origin);
  const auto name = reference.at("suite").get<std::string>();
  const auto file = embedded::files().find(std::string(folder) + name + ".json");
  if (name.find('/') != std::string::npos || file == embedded::files().end()) {
    const auto names = suite_names();
    std::string known, close;
    for (const auto& other : names) known += (known.empty() ? "" : ", ") + other;
    for (const auto& other : closest_names(name, names)) close += (close.empty() ? "; closest: " : ", ") + other;
    throw InvalidInput(field + ".suite", "no suite '" + name + "'" + close + " (suites: " + known + ")", origin);
  }
  auto document = nlohmann::json::parse(file->second);
  validator.validate(document);
  return document;
}

}  // namespace

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const auto& [path, text] : embedded::files()) {
    if (path.starts_with(folder) && path.ends_with(".json")) {
      names.emplace_back(path.substr(folder.size(), path.size() - folder.size() - 5));
    }
  }
  return names;
}

nlohmann::json with_suites(const nlohmann::json& spec, const std::string& origin) {
  if (!spec.is_object()) return spec;
  auto expanded = spec;
  auto suite_fixed = nlohmann::json::object();
  const auto add_fixed = [&](const nlohmann::json& document) {
    const auto fields = document.value("fixed", nlohmann::json::object());
    for (const auto& [field, value] : fields.items()) {
      if (!suite_fixed.contains(field)) suite_fixed[field] = value;
    }
  };
  auto fixed = expanded.value("fixed", nlohmann::json::object());
  if (fixed.is_object() && fixed.contains("model") && is_suite_reference(fixed.at("model"))) {
    if (expanded.contains("axes") && expanded["axes"].is_object() && expanded["axes"].contains("model")) {
      throw InvalidInput("fixed.model", "a model is either fixed or an axis, not both", origin);
    }
    const auto document = suite(fixed.at("model"), "fixed.model", origin);
    add_fixed(document);
    fixed.erase("model");
    expanded["fixed"] = fixed;
    if (!expanded.contains("axes") || !expanded["axes"].is_object()) expanded["axes"] = nlohmann::json::object();
    expanded["axes"]["model"] = document.at("models");
  } else if (expanded.contains("axes") && expanded["axes"].is_object() && expanded["axes"].contains("model") &&
             expanded["axes"]["model"].is_array()) {
    auto models = nlohmann::json::array();
    const auto& listed = expanded["axes"]["model"];
    for (std::size_t i = 0; i < listed.size(); ++i) {
      if (!is_suite_reference(listed[i])) {
        if (std::find(models.begin(), models.end(), listed[i]) == models.end()) models.push_back(listed[i]);
        continue;
      }
      const auto document = suite(listed[i], "axes.model[" + std::to_string(i) + "]", origin);
      add_fixed(document);
      for (const auto& model : document.at("models")) {
        if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
      }
    }
    expanded["axes"]["model"] = models;
  }
  if (!suite_fixed.empty()) {
    if (!fixed.is_object()) return expanded;  // the sweep schema names the problem
    for (const auto& [field, value] : suite_fixed.items()) {
      if (!fixed.contains(field)) fixed[field] = value;
    }
    expanded["fixed"] = fixed;
  }
  return expanded;
}

}  // namespace ts::sweep
