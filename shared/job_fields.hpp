#pragma once
// The job document's defaults, read from schemas/job.schema.json (the
// "default" of each property): the one place they are spelled, for the C++
// side and the Python runners alike. Model knobs have theirs in
// schemas/models.json (shared/models/catalogue.hpp).
#include <nlohmann/json.hpp>
#include <string>

namespace ts::job_fields {

// Field -> default, for every field that has one.
const nlohmann::json& defaults();
// Field -> {member -> default}, for the fields that may be an object whose
// members have defaults (profile).
const nlohmann::json& member_defaults();
// `job` with every defaulted field it leaves out filled in, and every
// defaulted member of an object it gives.
nlohmann::json with_defaults(const nlohmann::json& job);

// One field of `job`, or its default (std::out_of_range for a field
// without one: a programming error).
template <class T>
T get(const nlohmann::json& job, const std::string& name) {
  if (const auto found = job.find(name); found != job.end()) return found->template get<T>();
  return defaults().at(name).template get<T>();
}

}  // namespace ts::job_fields
