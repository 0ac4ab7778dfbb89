#pragma once
// The models every runner builds, read from schemas/models.json: their
// names, descriptions and the job fields ("knobs") each reads with their
// defaults. That file is the one place the defaults are spelled; the
// worker's registry, the Python runners and the FLOP counter read it.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace ts::models {

struct ModelSpec {
  std::string name;
  std::string description;
  std::string inputs;                       // images, features or sequences
  std::map<std::string, int64_t> defaults;  // knob -> default; its keys are the knobs the model reads
  // A library's: what NAME of LIBRARY:NAME must match, and that in words.
  std::optional<std::regex> name_pattern{};
  std::string name_expected{};
  std::vector<std::string> runners{};  // a library's: the runners that build its models
  // A decoder task generate runs: the knob (built-in) or configuration
  // attribute (hf:) that holds its positions; nullopt for the others.
  std::optional<std::string> generates{};
  // A library's knobs whose default is the model's own (null in the file):
  // read by the model, but given no value unless the job gives one.
  std::vector<std::string> own_knobs{};
};

// Every model, in the file's order of names (sorted).
const std::vector<ModelSpec>& catalogue();
// Throws ts::InvalidInput("model", ...) listing the known names.
const ModelSpec& find(std::string_view name);
// The library of a LIBRARY:NAME model (schemas/model_libraries.json) as a
// spec named "LIBRARY:*": its inputs and the knobs that have a default;
// nullptr for a name without a colon. Throws ts::InvalidInput("model", ...)
// for a LIBRARY that is not there, naming those that are, and for a NAME
// its library's name_pattern refuses (a torchscript: path leaving the
// agent's model roots). Whether NAME exists is the library's word, asked by
// the runner.
const ModelSpec* library_of(std::string_view model);
// Every library of schemas/model_libraries.json as library_of gives it, by name.
const std::map<std::string, ModelSpec, std::less<>>& libraries();
// The knobs of `job`'s model (a library's, for LIBRARY:NAME): the job's
// value where it has one, the default otherwise. Throws ts::InvalidInput
// for an unknown model.
std::map<std::string, int64_t> knobs_of(const nlohmann::json& job);
// Whether the model of `spec` reads `knob` (a default of its own or not).
bool reads_knob(const ModelSpec& spec, const std::string& knob);
// Every job field some model reads: the knobs of the models and libraries.
const std::vector<std::string>& all_knobs();
// Whether `model` is a language model (inputs "tokens": gpt, hf:): token
// ids in, the next token predicted at each of seq_len positions. False for
// an unknown model.
bool reads_tokens(std::string_view model);
// Throws ts::InvalidInput("model", ...) for a LIBRARY:NAME model of no
// known library, and ts::InvalidInput("data", ...) or ("memory_format",
// ...) when `job` reads imagefolder data or asks for channels_last with a
// model that does not read images.
void check_data(const nlohmann::json& job);
// Whether `model` takes `knob` (heads: transformer yes, resnet18 no); true
// for a model no schema names, whose runner checks it.
bool takes_knob(std::string_view model, const std::string& knob);
// Throws ts::InvalidInput naming the knob for a knob `job` gives that its
// model does not take (heads for resnet18, dropout for mlp), listing those
// it takes. A model no schema names is its runner's to check.
void check_knobs(const nlohmann::json& job);
// Throws ts::InvalidInput naming the field for a job whose sequence does
// not fit its model: task generate on a model that does not generate
// ("task"), a prompt_len + new_tokens beyond the model's positions
// ("new_tokens"), a seq_len beyond them ("seq_len"), an iters given to a
// generate job ("iters"). The positions of an hf: model are known here for
// the configurations schemas/hf_configurations.json names; a model type's
// own are the runner's to check, and so are the models of a name
// schemas/models.json does not know. `job` has its defaults resolved.
void check_sequence(const nlohmann::json& job);

}  // namespace ts::models
