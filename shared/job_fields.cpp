#include "shared/job_fields.hpp"

#include "shared/schema.hpp"

namespace ts::job_fields {

const nlohmann::json& defaults() {
  static const auto all = [] {
    const auto schema = nlohmann::json::parse(schema::text("job.schema.json"));
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, property] : schema.at("properties").items()) {
      if (property.contains("default")) values[name] = property.at("default");
    }
    return values;
  }();
  return all;
}

nlohmann::json with_defaults(const nlohmann::json& job) {
  auto resolved = job;
  for (const auto& [name, value] : defaults().items()) {
    if (!resolved.contains(name)) resolved[name] = value;
  }
  return resolved;
}

}  // namespace ts::job_fields
