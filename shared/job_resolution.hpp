#pragma once
// A job is resolved once (docs/worker.md, "The resolved job"), by the agent
// before any runner sees it: every default of schemas/job.schema.json
// filled in, the runner named, the model's knobs given (those it does not
// read dropped and listed), the iterations of an epoch and the thread count
// decided, and what the model cannot run refused. Runners validate the
// resolved job and derive nothing from it; one run by hand on a job nobody
// resolved asks this same code (the worker in process, the Python runners
// through `torchsweep resolve`).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::job_resolution {

// What the node that runs the job decides of it.
struct Node {
  std::string runner;  // the runner that will run it
  int64_t cores = 1;   // the cores its processes may run on
};

// The resolved job (`resolved: true`); a job already resolved is returned
// as it is. Throws ts::InvalidInput naming the field of a job that is
// invalid or that its model or runner cannot run.
nlohmann::json resolve(const nlohmann::json& job, const Node& node);

// Whether `job` is resolved.
bool is_resolved(const nlohmann::json& job);

// The timed iterations of an epoch of any job, resolved or not: a
// generation's decode steps (new_tokens - 1), the given iters, else
// dataset_size / batch_size (at least 1).
int64_t iterations(const nlohmann::json& job);

// The runner processes the job starts on one node: its ranks spread over
// its hosts (one without hosts runs them all here).
int64_t ranks_per_node(const nlohmann::json& job);

// Cores this process may run on (sched_getaffinity), at least 1.
int64_t cores_available();

}  // namespace ts::job_resolution
