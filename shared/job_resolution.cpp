#include "shared/job_resolution.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/schema.hpp"

namespace ts::job_resolution {
namespace {

const schema::Validator& job_schema() {
  static const schema::Validator validator("job.schema.json");
  return validator;
}

// The spec of the job's model, a library's for LIBRARY:NAME; refuses a
// library the runner builds no models of.
const models::ModelSpec& model_of(const std::string& model, const std::string& runner) {
  const auto* library = models::library_of(model);
  if (!library) return models::find(model);
  if (std::find(library->runners.begin(), library->runners.end(), runner) == library->runners.end()) {
    std::string builders;
    for (const auto& name : library->runners) builders += (builders.empty() ? "" : ", ") + name;
    throw InvalidInput("model", "'" + model + "': runner '" + runner + "' builds no " +
                                    model.substr(0, model.find(':')) + " models (" + builders + " does)");
  }
  return *library;
}

}  // namespace

bool is_resolved(const nlohmann::json& job) { return job.value("resolved", false); }

int64_t iterations(const nlohmann::json& job) {
  if (job_fields::get<std::string>(job, "task") == "generate") return job_fields::get<int64_t>(job, "new_tokens") - 1;
  if (job.contains("iters")) return job.at("iters").get<int64_t>();
  return std::max<int64_t>(1, job_fields::get<int64_t>(job, "dataset_size") / job.at("batch_size").get<int64_t>());
}

int64_t ranks_per_node(const nlohmann::json& job) {
  const auto ranks = job_fields::get<int64_t>(job, "gpus");
  const auto hosts = job.contains("hosts") ? static_cast<int64_t>(job.at("hosts").size()) : int64_t{1};
  return std::max<int64_t>(1, (ranks + hosts - 1) / hosts);
}

int64_t cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

nlohmann::json resolve(const nlohmann::json& given, const Node& node) {
  job_schema().validate(given);
  if (is_resolved(given)) return given;
  auto job = job_fields::with_defaults(given);
  job["runner"] = node.runner;
  const auto model = job.at("model").get<std::string>();
  const auto& spec = model_of(model, node.runner);
  models::check_data(job);
  models::check_knobs(given);

  // The model's knobs: the job's value or the model's default.
  for (const auto& [knob, value] : spec.defaults) {
    if (!job.contains(knob)) job[knob] = value;
  }
  if (job.contains("width") && job.contains("heads") &&
      job.at("width").get<int64_t>() % job.at("heads").get<int64_t>()) {
    throw InvalidInput("heads", "must divide width (" + job.at("width").dump() + "), got " + job.at("heads").dump());
  }
  models::check_sequence(job);

  job["iters"] = iterations(job);
  if (job.at("task") != "generate") {
    job.erase("prompt_len");  // generate's alone
    job.erase("new_tokens");
  }
  if (!given.contains("dataset_size")) job.erase("dataset_size");  // resolved into iters; kept only when given
  if (job.at("threads") == 0) job["threads"] = std::max<int64_t>(1, node.cores / ranks_per_node(job));
  job["resolved"] = true;
  job_schema().validate(job);
  return job;
}

}  // namespace ts::job_resolution
