#pragma once
// Runs one job through a runner (any executable honouring the worker
// contract) in a child process: its own process group, stdout and stderr to
// files and no other descriptor, a wall-clock limit that kills the whole
// group, and an outcome that says how it ended and why. The runner gets
// SIGKILL when the thread that called execute() ends (the agent's), so it
// never outlives its agent; so do mpirun's ranks, which arm the same signal
// themselves (TORCHSWEEP_DIE_WITH_PARENT, docs/operations.md).
#include <boost/asio.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ts::agent {

namespace asio = boost::asio;

struct ExecutionRequest {
  std::filesystem::path runner;  // executable
  // A Python runner's interpreter (its environment's, agent/node/environments.hpp),
  // which starts it; empty: the runner is started as it is.
  std::filesystem::path interpreter;
  // A command the runner is started under, e.g. mpirun for a multi-rank job
  // (rank_launch.hpp); empty: the runner is started directly.
  std::vector<std::string> launcher;
  nlohmann::json job;               // the job document, written to job.json
  std::filesystem::path directory;  // where job.json, result.json and the logs go (created)
  std::chrono::milliseconds timeout{std::chrono::hours(1)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(3)};  // SIGTERM, then SIGKILL after this
  std::map<std::string, std::string> environment;                 // added to (or replacing) the agent's own
  // Called with each line the runner appends to $TORCHSWEEP_PROGRESS_FILE
  // (one JSON object per finished epoch; docs/worker.md).
  std::function<void(const nlohmann::json&)> on_progress;
  // Set to true to stop the job: its process group is killed.
  std::shared_ptr<bool> cancel_requested = std::make_shared<bool>(false);
  std::chrono::milliseconds poll_interval{200};  // how often progress and cancellation are looked at
  // Where the runner's processes (pids and start times) are kept while it
  // runs, for the agent's next life to kill (ProcessTree::kill_recorded);
  // empty: nowhere.
  std::filesystem::path record_file;
  // Arguments before --job (--count-flops: a count instead of a run), and
  // the schema the document written to --out follows.
  std::vector<std::string> mode_arguments{};
  std::string out_schema{"result.schema.json"};
};

// Sets the request's interpreter and runner from a runner command
// (agent/node/environments.hpp's runner_command: [program] or [interpreter, program]).
void start_with(ExecutionRequest& request, const std::vector<std::string>& command);

struct ExecutionOutcome {
  enum class Kind {
    completed,      // exit 0, a valid result with status ok (or none, for a document without one)
    run_failed,     // exit 3, a valid result with status failed or unsupported
    invalid_job,    // exit 2: the runner refused the job; retrying cannot help
    crashed,        // killed by a signal or an unexpected exit code, or no valid result
    timed_out,      // over the limit; the process group was killed
    launch_failed,  // the runner could not be started
    cancelled,      // cancel_requested; the process group was killed
    throttled,      // completed, but a GPU throttled and the job asks discard_if_throttled (set by the agent)
    busy_machine    // completed, but the node was busy and the job asks require_quiet_machine (set by the agent)
  };
  Kind kind = Kind::crashed;
  std::optional<nlohmann::json> result;  // the runner's result document (out_schema's), when valid
  std::optional<int> exit_code, signal;
  std::string reason;  // empty when completed
  std::string stdout_tail, stderr_tail;
  double seconds = 0;

  // Whether another attempt could end differently (the coordinator retries these).
  bool retryable() const {
    return kind == Kind::crashed || kind == Kind::timed_out || kind == Kind::launch_failed || kind == Kind::throttled ||
           kind == Kind::busy_machine;
  }
};

std::string to_string(ExecutionOutcome::Kind kind);

// Runs the request; never throws for anything the child does.
asio::awaitable<ExecutionOutcome> execute(ExecutionRequest request);

// The line of a runner's stderr that best says why it failed: mpirun's
// notice of which rank died and how, else the last ERROR log line; empty
// when there is none.
std::string failure_line(const std::string& stderr_tail);

// The last `bytes` of a file, starting at a line boundary when possible.
std::string tail_of(const std::filesystem::path& file, std::size_t bytes = 4096);

}  // namespace ts::agent
