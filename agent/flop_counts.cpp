#include "agent/flop_counts.hpp"

#include <chrono>

#include "agent/executor.hpp"
#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/models/flops.hpp"

namespace ts::agent {
namespace {

// What the count depends on: the counting program, the model and the job
// fields that shape it, and for a model file under the model root its size
// and modification time (a file saved again is counted again).
std::string key(const nlohmann::json& job, const std::vector<std::string>& command) {
  nlohmann::json shape{{"command", command},
                       {"model", job_fields::get<std::string>(job, "model")},
                       {"task", job_fields::get<std::string>(job, "task")},
                       {"batch_size", job_fields::get<int64_t>(job, "batch_size")},
                       {"knobs", models::knobs_of(job)}};
  if (const auto root = job.value("model_root", std::string()); !root.empty()) {
    const auto model = shape.at("model").get<std::string>();
    const auto file = std::filesystem::path(root) / model.substr(model.find(':') + 1);
    std::error_code error;
    if (const auto size = std::filesystem::file_size(file, error); !error) {
      const auto modified = std::filesystem::last_write_time(file, error);
      shape["file"] = {file.string(), size, error ? 0 : modified.time_since_epoch().count()};
    }
  }
  return shape.dump();
}

}  // namespace

bool lacks_counted_flops(const nlohmann::json& result) {
  if (result.value(nlohmann::json::json_pointer("/execution/counted_flops"), nlohmann::json()).is_object()) {
    return false;
  }
  try {
    models::step_flops(result.at("job"));
    return false;
  } catch (const InvalidInput&) {
    return true;  // no formula
  }
}

asio::awaitable<FlopCount> FlopCounts::count(nlohmann::json job, std::vector<std::string> command,
                                             std::string counted_by, std::filesystem::path directory) {
  FlopCount outcome;
  std::string id;
  try {
    id = key(job, command);
  } catch (const std::exception& error) {  // a job the runner ran is valid; this guards the agent all the same
    outcome.problem = std::string("its shape is unreadable: ") + error.what();
    co_return outcome;
  }
  if (const auto known = known_.find(id); known != known_.end()) {
    outcome.counted = known->second;
    co_return outcome;
  }
  ExecutionRequest request;
  start_with(request, command);
  request.job = std::move(job);
  request.directory = std::move(directory);
  request.timeout = std::chrono::minutes(5);
  request.mode_arguments = {"--count-flops"};
  request.out_schema = "counted_flops.schema.json";
  const auto ran = co_await execute(std::move(request));
  if (ran.kind != ExecutionOutcome::Kind::completed) {
    outcome.problem = counted_by + " did not count them: " + ran.reason;
    co_return outcome;
  }
  auto counted = *ran.result;
  counted["counted_by"] = counted_by;
  known_[id] = counted;
  outcome.counted = std::move(counted);
  co_return outcome;
}

}  // namespace ts::agent
