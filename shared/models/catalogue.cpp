#include "shared/models/catalogue.hpp"

#include "shared/errors.hpp"
#include "shared/schema.hpp"

namespace ts::models {

const std::vector<ModelSpec>& catalogue() {
  static const auto all = [] {
    std::vector<ModelSpec> specs;
    const auto file = nlohmann::json::parse(schema::text("models.json"));
    for (const auto& [name, entry] : file.items()) {
      if (name.starts_with('$')) continue;  // $comment
      specs.push_back({name, entry.at("description").get<std::string>(),
                       entry.at("defaults").get<std::map<std::string, int64_t>>()});
    }
    return specs;
  }();
  return all;
}

const ModelSpec& find(std::string_view name) {
  std::string known;
  for (const auto& spec : catalogue()) {
    if (spec.name == name) return spec;
    known += (known.empty() ? "" : ", ") + spec.name;
  }
  throw InvalidInput("model", "unknown model '" + std::string(name) + "'; known models: " + known);
}

std::map<std::string, int64_t> knobs_of(const nlohmann::json& job) {
  auto knobs = find(job.at("model").get<std::string>()).defaults;
  for (auto& [knob, value] : knobs) {
    if (const auto given = job.find(knob); given != job.end()) value = given->get<int64_t>();
  }
  return knobs;
}

}  // namespace ts::models
