#include "shared/schema.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

#include "shared/embedded_files.hpp"
#include "shared/errors.hpp"

namespace ts::schema {
namespace {

// "$ref": "job.schema.json" (possibly resolved against an $id) names an
// embedded file by its last path segments.
std::string_view resolve_reference(std::string_view uri) {
  if (const auto hash = uri.find('#'); hash != std::string_view::npos) uri = uri.substr(0, hash);
  for (const auto& [name, text] : embedded::files()) {
    if (uri == name) return name;
    if (uri.size() > name.size() && uri.ends_with(name) && uri[uri.size() - name.size() - 1] == '/') return name;
  }
  throw std::out_of_range("schema reference '" + std::string(uri) + "' names no file in schemas/");
}

// valijson reports a path as {"<root>", "[axes]", "[batch_size]", "[2]"}.
std::string field_path(const std::vector<std::string>& context) {
  std::string path;
  for (const auto& part : context) {
    if (part == "<root>" || part.size() < 2 || part.front() != '[') continue;
    const auto inner = part.substr(1, part.size() - 2);
    const bool index = !inner.empty() && std::all_of(inner.begin(), inner.end(), ::isdigit);
    if (index) {
      path += part;
    } else {
      if (!path.empty()) path += '.';
      path += inner;
    }
  }
  return path;
}

// Two of valijson's messages name the offending property only in their text:
// a missing required property and a property no schema allows. The field
// path then ends with that property.
std::string field_of(const valijson::ValidationResults::Error& error) {
  auto path = field_path(error.context);
  const auto& text = error.description;
  const bool names_property = text.starts_with("Missing required property") ||
                              text.find("could not be validated using 'properties'") != std::string::npos;
  const auto close = text.rfind('\'');
  const auto open = close == std::string::npos || close == 0 ? std::string::npos : text.rfind('\'', close - 1);
  if (names_property && open != std::string::npos) {
    path += (path.empty() ? "" : ".") + text.substr(open + 1, close - open - 1);
  }
  return path;
}

}  // namespace

struct Validator::Parsed {
  valijson::Schema schema;  // read-only once parsed: shared by every thread
  // valijson's validators, kept across documents for their caches of
  // compiled "pattern" regexes (whose construction dominated validation when
  // one was made per call). A cache is not thread-safe, so each validation
  // borrows one: threads that validate at once (the coordinator's pool)
  // each get their own and never wait for each other's documents.
  std::mutex mutex;
  std::vector<std::unique_ptr<valijson::Validator>> idle;

  std::unique_ptr<valijson::Validator> borrow() {
    const std::lock_guard lock(mutex);
    if (idle.empty()) return std::make_unique<valijson::Validator>(valijson::Validator::kStrongTypes);
    auto validator = std::move(idle.back());
    idle.pop_back();
    return validator;
  }
  void give_back(std::unique_ptr<valijson::Validator> validator) {
    const std::lock_guard lock(mutex);
    idle.push_back(std::move(validator));
  }
};

std::string_view text(std::string_view name) {
  const auto& files = embedded::files();
  const auto found = files.find(name);
  if (found == files.end()) throw std::out_of_range("no contract file '" + std::string(name) + "' in schemas/");
  return found->second;
}

Validator::Validator(std::string_view name) : name_(name), parsed_(std::make_unique<Parsed>()) {
  const auto root = nlohmann::json::parse(text(name));
  // Referenced documents live here until parsing is done; valijson copies
  // what it needs into the schema.
  std::map<std::string, nlohmann::json> fetched;
  auto fetch = [&](const std::string& uri) -> const nlohmann::json* {
    const auto key = std::string(resolve_reference(uri));
    auto [at, inserted] = fetched.try_emplace(key);
    if (inserted) at->second = nlohmann::json::parse(text(key));
    return &at->second;
  };
  auto release = [](const nlohmann::json*) {};
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(root);
  parser.populateSchema(adapter, parsed_->schema, fetch, release);
}

Validator::~Validator() = default;
Validator::Validator(Validator&&) noexcept = default;
Validator& Validator::operator=(Validator&&) noexcept = default;

std::vector<Problem> Validator::problems(const nlohmann::json& document) const {
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  auto validator = parsed_->borrow();
  const bool valid = validator->validate(parsed_->schema, adapter, &results);
  parsed_->give_back(std::move(validator));
  if (valid) return {};
  std::vector<std::pair<std::size_t, Problem>> ranked;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    ranked.push_back({error.context.size(), Problem{field_of(error), error.description}});
  }
  // The deepest context is the most specific explanation; the outer ones
  // only say "a property of this object failed".
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Problem> out;
  for (auto& [depth, problem] : ranked) out.push_back(std::move(problem));
  return out;
}

void Validator::validate(const nlohmann::json& document) const {
  const auto found = problems(document);
  if (found.empty()) return;
  throw InvalidInput(found.front().field, found.front().expected);
}

}  // namespace ts::schema
