#include "shared/models/catalogue.hpp"

#include <algorithm>
#include <set>

#include "shared/errors.hpp"
#include "shared/schema.hpp"

namespace ts::models {

const std::vector<ModelSpec>& catalogue() {
  static const auto all = [] {
    std::vector<ModelSpec> specs;
    const auto file = nlohmann::json::parse(schema::text("models.json"));
    for (const auto& [name, entry] : file.items()) {
      if (name.starts_with('$')) continue;  // $comment
      ModelSpec spec{name, entry.at("description").get<std::string>(), entry.at("inputs").get<std::string>(),
                     entry.at("defaults").get<std::map<std::string, int64_t>>()};
      if (entry.contains("generates")) spec.generates = entry.at("generates").at("positions").get<std::string>();
      specs.push_back(std::move(spec));
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
        if (value.is_number_integer()) {
          spec.defaults[knob] = value.get<int64_t>();
        } else {
          spec.own_knobs.push_back(knob);  // null: the model's own
        }
      }
      spec.runners = entry.at("runners").get<std::vector<std::string>>();
      if (entry.contains("generates")) spec.generates = entry.at("generates").at("positions").get<std::string>();
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

bool reads_knob(const ModelSpec& spec, const std::string& knob) {
  return spec.defaults.contains(knob) ||
         std::find(spec.own_knobs.begin(), spec.own_knobs.end(), knob) != spec.own_knobs.end();
}

namespace {

// The knobs a model takes: those with a default of its own and those it leaves to the model (null).
std::set<std::string> knobs_taken(const ModelSpec& spec) {
  std::set<std::string> knobs;
  for (const auto& [knob, value] : spec.defaults) knobs.insert(knob);
  knobs.insert(spec.own_knobs.begin(), spec.own_knobs.end());
  return knobs;
}

}  // namespace

const std::vector<std::string>& all_knobs() {
  static const auto all = [] {
    std::set<std::string> knobs;
    const auto add = [&](const ModelSpec& spec) { knobs.merge(knobs_taken(spec)); };
    for (const auto& spec : catalogue()) add(spec);
    for (const auto& [name, spec] : libraries()) add(spec);
    return std::vector<std::string>(knobs.begin(), knobs.end());
  }();
  return all;
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
  const bool folder = data != job.end() && data->is_object();
  const bool channels_last = job.value("memory_format", "") == "channels_last";
  if (!folder && !channels_last) return;
  const auto& model = library ? *library : find(name);
  if (model.inputs == "images") return;
  std::string image_models;
  for (const auto& spec : catalogue()) {
    if (spec.inputs == "images") image_models += (image_models.empty() ? "" : ", ") + spec.name;
  }
  throw InvalidInput(folder ? "data" : "memory_format", std::string(folder ? "imagefolder data" : "channels_last") +
                                                            " needs a model that reads images (" + image_models +
                                                            "); '" + model.name + "' reads " + model.inputs);
}

namespace {

// The spec of a model a schema names (a library's for LIBRARY:NAME), or
// nullptr for a name some runner may know: its runner checks it.
const ModelSpec* known_spec(std::string_view name) {
  if (const auto* library = library_of(name)) return library;
  const auto& all = catalogue();
  const auto built_in = std::find_if(all.begin(), all.end(), [&](const ModelSpec& spec) { return spec.name == name; });
  return built_in == all.end() ? nullptr : &*built_in;
}

}  // namespace

bool takes_knob(std::string_view model, const std::string& knob) {
  const auto* spec = known_spec(model);
  return spec == nullptr || reads_knob(*spec, knob);
}

void check_knobs(const nlohmann::json& job) {
  const auto name = job.at("model").get<std::string>();
  const auto* spec = known_spec(name);
  if (spec == nullptr) return;
  const auto& model = *spec;
  for (const auto& knob : all_knobs()) {
    if (!job.contains(knob) || reads_knob(model, knob)) continue;
    std::string listed;
    for (const auto& own : knobs_taken(model)) listed += (listed.empty() ? "" : ", ") + own;
    throw InvalidInput(knob, "model '" + name + "' does not take it (" +
                                 (listed.empty() ? "it takes no knob" : "its knobs: " + listed) + ")");
  }
}

namespace {

// The positions an hf: configuration the repository names gives, if any.
std::optional<int64_t> named_positions(std::string_view model, const std::string& attribute) {
  static const auto named = nlohmann::json::parse(schema::text("hf_configurations.json"));
  const auto name = std::string(model.substr(model.find(':') + 1));
  if (!named.contains(name) || !named.at(name).at("config").contains(attribute)) return std::nullopt;
  return named.at(name).at("config").at(attribute).get<int64_t>();
}

}  // namespace

void check_sequence(const nlohmann::json& job) {
  const auto name = job.at("model").get<std::string>();
  const auto* library = library_of(name);
  const auto* known = known_spec(name);
  if (known == nullptr) return;
  const auto& model = *known;
  const bool generate = job.at("task").get<std::string>() == "generate";
  if (generate && !model.generates) {
    std::string decoders;
    for (const auto& spec : catalogue()) {
      if (spec.generates) decoders += spec.name + ", ";
    }
    for (const auto& [library_name, spec] : libraries()) {
      if (spec.generates) decoders += library_name + ": causal language models, ";
    }
    throw InvalidInput("task", "generate needs a decoder (" + decoders.substr(0, decoders.size() - 2) + "); '" + name +
                                   "' reads " + model.inputs + " and generates nothing");
  }
  if (!model.generates) return;
  if (generate && job.contains("iters")) {
    throw InvalidInput("iters", "a generate job times new_tokens - 1 decode steps an epoch; give new_tokens instead");
  }
  std::optional<int64_t> positions;
  std::string spelled;
  if (library) {
    positions = named_positions(name, *model.generates);
    spelled = "its configuration's " + *model.generates;
  } else {
    positions = knobs_of(job).at(*model.generates);
    spelled = *model.generates;
  }
  if (!positions) return;
  if (library && job.contains("seq_len") && job.at("seq_len").get<int64_t>() > *positions) {
    throw InvalidInput("seq_len", std::to_string(job.at("seq_len").get<int64_t>()) + " is beyond the " +
                                      std::to_string(*positions) + " positions of '" + name + "' (" + spelled + ")");
  }
  if (!generate) return;
  const auto prompt = job.at("prompt_len").get<int64_t>(), fresh = job.at("new_tokens").get<int64_t>();
  if (prompt + fresh > *positions) {
    throw InvalidInput("new_tokens", "prompt_len (" + std::to_string(prompt) + ") + new_tokens (" +
                                         std::to_string(fresh) + ") is beyond the " + std::to_string(*positions) +
                                         " positions of '" + name + "' (" + spelled + ")");
  }
}

}  // namespace ts::models
