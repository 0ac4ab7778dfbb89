#include "shared/job_fields.hpp"

#include "shared/schema.hpp"

namespace ts::job_fields {

namespace {

const nlohmann::json& properties() {
  static const auto all = nlohmann::json::parse(schema::text("job.schema.json")).at("properties");
  return all;
}

}  // namespace

const nlohmann::json& defaults() {
  static const auto all = [] {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, property] : properties().items()) {
      if (property.contains("default")) values[name] = property.at("default");
    }
    return values;
  }();
  return all;
}

const nlohmann::json& member_defaults() {
  static const auto all = [] {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, property] : properties().items()) {
      // The object the field may be: itself, or one branch of its oneOf (e.g. profile: null or an object).
      auto branches = property.contains("oneOf") ? property.at("oneOf") : nlohmann::json::array({property});
      for (const auto& branch : branches) {
        if (!branch.contains("properties")) continue;
        for (const auto& [member, member_schema] : branch.at("properties").items()) {
          if (member_schema.contains("default")) values[name][member] = member_schema.at("default");
        }
      }
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
  for (const auto& [name, members] : member_defaults().items()) {
    const auto given = resolved.find(name);
    if (given == resolved.end() || !given->is_object()) continue;
    for (const auto& [member, value] : members.items()) {
      if (!given->contains(member)) (*given)[member] = value;
    }
  }
  return resolved;
}

}  // namespace ts::job_fields
