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
      specs.push_back({name, entry.at("description").get<std::string>(), entry.at("inputs").get<std::string>(),
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

const std::map<std::string, ModelSpec, std::less<>>& libraries() {
  static const auto all = [] {
    std::map<std::string, ModelSpec, std::less<>> specs;
    const auto file = nlohmann::json::parse(schema::text("model_libraries.json"));
    for (const auto& [name, entry] : file.items()) {
      if (name.starts_with('$')) continue;  // $comment
      ModelSpec spec{
          name + ":*", entry.at("description").get<std::string>(), entry.at("inputs").get<std::string>(), {}};
      for (const auto& [knob, value] : entry.at("defaults").items()) {
        if (value.is_number_integer()) spec.defaults[knob] = value.get<int64_t>();  // null: the model's own
      }
      spec.runners = entry.at("runners").get<std::vector<std::string>>();
      if (entry.contains("name_pattern")) {
        spec.name_pattern = std::regex(entry.at("name_pattern").get<std::string>());
        spec.name_expected = entry.at("name_expected").get<std::string>();
      }
      specs[name] = std::move(spec);
    }
    return specs;
  }();
  return all;
}

const ModelSpec* library_of(std::string_view model) {
  const auto colon = model.find(':');
  if (colon == std::string_view::npos) return nullptr;
  const auto found = libraries().find(model.substr(0, colon));
  if (found != libraries().end()) {
    const auto& spec = found->second;
    if (spec.name_pattern && !std::regex_match(model.begin() + colon + 1, model.end(), *spec.name_pattern)) {
      throw InvalidInput("model", "'" + std::string(model) + "': expected " + std::string(model.substr(0, colon + 1)) +
                                      "NAME with NAME " + spec.name_expected);
    }
    return &spec;
  }
  std::string known;
  for (const auto& [name, spec] : libraries()) known += (known.empty() ? "" : ", ") + name;
  throw InvalidInput("model", "'" + std::string(model) + "': no library '" + std::string(model.substr(0, colon)) +
                                  "'; models are named from " + known + " (schemas/model_libraries.json)");
}

std::map<std::string, int64_t> knobs_of(const nlohmann::json& job) {
  const auto name = job.at("model").get<std::string>();
  const auto* library = library_of(name);
  auto knobs = (library ? *library : find(name)).defaults;
  for (auto& [knob, value] : knobs) {
    if (const auto given = job.find(knob); given != job.end()) value = given->get<int64_t>();
  }
  return knobs;
}

bool reads_tokens(std::string_view model) {
  try {
    const auto* library = library_of(model);
    return (library ? *library : find(model)).inputs == "tokens";
  } catch (const InvalidInput&) {
    return false;
  }
}

void check_data(const nlohmann::json& job) {
  const auto name = job.at("model").get<std::string>();
  const auto* library = library_of(name);  // throws for a library that does not exist
  const auto data = job.find("data");
  if (data == job.end() || !data->is_object()) return;
  const auto& model = library ? *library : find(name);
  if (model.inputs == "images") return;
  std::string image_models;
  for (const auto& spec : catalogue()) {
    if (spec.inputs == "images") image_models += (image_models.empty() ? "" : ", ") + spec.name;
  }
  throw InvalidInput("data", "imagefolder data needs a model that reads images (" + image_models + "); '" + model.name +
                                 "' reads " + model.inputs);
}

}  // namespace ts::models
