#pragma once
// Validation of documents against the JSON Schemas in schemas/.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ts::schema {

struct Problem {
  std::string field;  // path into the document, e.g. "axes.batch_size[2]"; empty for the root
  std::string expected;
};

// A parsed schema, reusable for many documents. Load once where it is hot.
class Validator {
 public:
  // `name` is the path under schemas/, e.g. "job.schema.json". Other schemas
  // it references with "$ref" are resolved among the embedded files.
  explicit Validator(std::string_view name);
  ~Validator();
  Validator(Validator&&) noexcept;
  Validator& operator=(Validator&&) noexcept;

  // Every violation, most specific first; empty when the document is valid.
  std::vector<Problem> problems(const nlohmann::json& document) const;
  // Throws ts::InvalidInput naming the most specific failing field.
  void validate(const nlohmann::json& document) const;
  const std::string& name() const noexcept { return name_; }

 private:
  struct Parsed;
  std::string name_;
  std::unique_ptr<Parsed> parsed_;
};

// The text of an embedded contract file; throws std::out_of_range if absent.
std::string_view text(std::string_view name);

}  // namespace ts::schema
