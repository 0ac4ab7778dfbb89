#include "agent/executor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "agent/node/process_tree.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/runner_contract.hpp"
#include "shared/schema.hpp"

extern char** environ;

namespace ts::agent {
namespace {

using Clock = std::chrono::steady_clock;

// The executable `name` names: itself when it holds a '/', else the first
// match on PATH (resolved before fork, where the child may only make system calls).
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    const auto candidate = (std::filesystem::path(folder.empty() ? "." : folder) / name).string();
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;  // execve fails with ENOENT, reported as a launch failure
}

// Starts the runner: its own process group, stdin from /dev/null, stdout
// and stderr to files, no other descriptor of the agent (its sockets must
// not outlive it in the runner), and SIGKILL when the thread that started
// it ends, so a runner dies with its agent however the agent ends. Returns
// the pid, or throws std::system_error with what failed.
pid_t spawn_runner(std::vector<char*>& argv, std::vector<char*>& environment, const std::filesystem::path& out,
                   const std::filesystem::path& err) {
  const auto executable = resolve_executable(argv.front());
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  const pid_t agent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) {
    // Only async-signal-safe system calls from here to execve.
    const auto fail = [&](int error) {
      [[maybe_unused]] auto written = ::write(report[1], &error, sizeof error);
      ::_exit(127);
    };
    if (::setpgid(0, 0) != 0) fail(errno);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(errno);
    if (::getppid() != agent) ::_exit(127);  // the agent is already gone
    ::signal(SIGPIPE, SIG_DFL);              // what the agent ignores, the runner must not
    ::signal(SIGXFSZ, SIG_DFL);
    const int in = ::open("/dev/null", O_RDONLY);
    const int stdout_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int stderr_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || stdout_fd < 0 || stderr_fd < 0) fail(errno);
    if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(stdout_fd, STDOUT_FILENO) < 0 || ::dup2(stderr_fd, STDERR_FILENO) < 0)
      fail(errno);
    // Everything above 2 but the report pipe, which closes on exec.
    const unsigned int pipe_fd = static_cast<unsigned int>(report[1]);
    if (pipe_fd > 3) ::close_range(3, pipe_fd - 1, 0);
    ::close_range(pipe_fd + 1, ~0U, 0);
    ::execve(executable.c_str(), argv.data(), environment.data());
    fail(errno);
  }
  ::close(report[1]);
  int error = 0;
  ssize_t got;
  while ((got = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got > 0) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::system_error(error, std::generic_category(), executable);
  }
  return pid;
}

std::string signal_reason(int number) {
  std::string reason = "killed by signal " + std::to_string(number) + " (" + strsignal(number) + ")";
  if (number == SIGKILL) reason += "; the kernel's out-of-memory killer ends processes this way";
  return reason;
}

std::optional<nlohmann::json> read_result(const std::filesystem::path& file, const std::string& schema_name,
                                          std::string& problem) {
  static const schema::Validator results("result.schema.json");
  const auto other = schema_name == results.name() ? std::nullopt : std::optional<schema::Validator>(schema_name);
  const auto& validator = other ? *other : results;
  if (!std::filesystem::exists(file)) {
    problem = "it wrote no result document";
    return std::nullopt;
  }
  try {
    auto document = json_io::read(file.string());
    validator.validate(document);
    return document;
  } catch (const InvalidInput& error) {
    problem = std::string("its result document is invalid: ") + error.what();
  }
  return std::nullopt;
}

// The child's reaper thread. If the coroutine waiting on it is destroyed
// (the agent shuts down mid-job), every process of the runner is killed,
// ranks in process groups of their own included, and the thread joined,
// never left running.
struct Reaper {
  pid_t pid;
  ProcessTree& tree;
  std::thread thread;
  ~Reaper() {
    if (!thread.joinable()) return;
    tree.observe();
    tree.signal_all(SIGKILL);
    thread.join();
  }
};

// The agent's environment with `extra` added or replaced, as "KEY=VALUE"
// strings for execve.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!extra.contains(std::string(text.substr(0, text.find('='))))) entries.emplace_back(text);
  }
  for (const auto& [key, value] : extra) entries.push_back(key + "=" + value);
  return entries;
}

// Reads the complete lines appended to the progress file since `offset`.
void forward_progress(const std::filesystem::path& file, std::streamoff& offset,
                      const std::function<void(const nlohmann::json&)>& on_progress) {
  std::ifstream in(file, std::ios::binary);
  if (!in || !on_progress) return;
  in.seekg(offset);
  std::string line;
  while (std::getline(in, line) && !in.eof()) {
    offset += static_cast<std::streamoff>(line.size() + 1);
    try {
      on_progress(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& error) {
      log::debug("ignoring a progress line that is not JSON: {}", error.what());
    }
  }
}

}  // namespace

std::string to_string(ExecutionOutcome::Kind kind) {
  switch (kind) {
    case ExecutionOutcome::Kind::completed:
      return "completed";
    case ExecutionOutcome::Kind::run_failed:
      return "run_failed";
    case ExecutionOutcome::Kind::invalid_job:
      return "invalid_job";
    case ExecutionOutcome::Kind::crashed:
      return "crashed";
    case ExecutionOutcome::Kind::timed_out:
      return "timed_out";
    case ExecutionOutcome::Kind::launch_failed:
      return "launch_failed";
    case ExecutionOutcome::Kind::cancelled:
      return "cancelled";
    case ExecutionOutcome::Kind::throttled:
      return "throttled";
    case ExecutionOutcome::Kind::busy_machine:
      return "busy_machine";
  }
  return "unknown";
}

std::string failure_line(const std::string& stderr_tail) {
  std::istringstream lines(stderr_tail);
  std::string line, rank_notice, error;
  bool in_notice = false;  // mpirun wraps its notice over several lines
  while (std::getline(lines, line)) {
    if (line.find("noticed that process rank") != std::string::npos) {
      rank_notice = line;
      in_notice = true;
    } else if (in_notice && !line.empty() && !line.starts_with("---")) {
      rank_notice += " " + line;
    } else {
      in_notice = false;
    }
    // A log line at the contract's failure level: "TIMESTAMP ERROR PROGRAM: ...".
    if (line.find(" " + std::string(runner_contract::log_failure_level) + " ") != std::string::npos) error = line;
  }
  return rank_notice.empty() ? error : rank_notice;
}

std::string tail_of(const std::filesystem::path& file, std::size_t bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::size_t>(in.tellg());
  const auto start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start > 0) {
    if (const auto newline = text.find('\n'); newline != std::string::npos && newline + 1 < text.size()) {
      text.erase(0, newline + 1);
    }
  }
  return text;
}

void start_with(ExecutionRequest& request, const std::vector<std::string>& command) {
  request.runner = command.back();
  request.interpreter = command.size() == 2 ? std::filesystem::path(command.front()) : std::filesystem::path();
}

asio::awaitable<ExecutionOutcome> execute(ExecutionRequest request) {
  ExecutionOutcome outcome;
  std::filesystem::create_directories(request.directory);
  const auto job_file = request.directory / "job.json";
  const auto result_file = request.directory / "result.json";
  const auto stdout_file = request.directory / "stdout.log";
  const auto stderr_file = request.directory / "stderr.log";
  const auto progress_file = request.directory / "progress.jsonl";
  std::filesystem::remove(result_file);
  std::filesystem::remove(progress_file);
  auto environment_map = request.environment;
  environment_map[std::string(runner_contract::progress_variable)] = progress_file.string();
  // Asks the ranks mpirun starts to die with mpirun, as the runner dies with the agent.
  environment_map["TORCHSWEEP_DIE_WITH_PARENT"] = "1";
  auto environment_strings = child_environment(environment_map);
  std::vector<char*> environment;
  for (auto& entry : environment_strings) environment.push_back(entry.data());
  environment.push_back(nullptr);
  json_io::write_atomically(job_file.string(), request.job);

  auto arguments = request.launcher;
  if (!request.interpreter.empty()) arguments.push_back(request.interpreter.string());
  arguments.push_back(request.runner.string());
  arguments.insert(arguments.end(), request.mode_arguments.begin(), request.mode_arguments.end());
  arguments.insert(arguments.end(), {"--job", job_file.string(), "--out", result_file.string()});
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  try {
    pid = spawn_runner(argv, environment, stdout_file, stderr_file);
  } catch (const std::system_error& error) {
    outcome.kind = ExecutionOutcome::Kind::launch_failed;
    outcome.reason = std::string("cannot start ") + (request.launcher.empty() ? "runner " : "launcher ") +
                     argv.front() + ": " + error.code().message();
    co_return outcome;
  }
  // mpirun puts its ranks in process groups of their own.
  ProcessTree tree(pid, /*scan=*/!request.launcher.empty());
  const auto record = [&] {
    if (!request.record_file.empty()) tree.save(request.record_file);
  };
  record();

  // A reaper thread blocks in waitpid and wakes this coroutine by cancelling
  // its timer; between wake-ups (every poll_interval) progress is forwarded
  // and cancellation and the deadline are checked.
  const auto started = Clock::now();
  const auto deadline = started + request.timeout;
  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor);
  auto exited = std::make_shared<bool>(false);
  auto status = std::make_shared<int>(0);
  Reaper reaper{pid, tree, std::thread([pid, status, timer, exited, executor] {
                  while (::waitpid(pid, status.get(), 0) < 0 && errno == EINTR) {
                  }
                  asio::post(executor, [timer, exited] {
                    *exited = true;
                    timer->cancel();
                  });
                })};
  std::streamoff progress_offset = 0;
  bool timed_out = false, cancelled = false;
  while (!*exited) {
    timer->expires_at(std::min(deadline, Clock::now() + request.poll_interval));
    boost::system::error_code ignored;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    forward_progress(progress_file, progress_offset, request.on_progress);
    if (*exited) break;
    if (tree.observe()) record();
    cancelled = *request.cancel_requested;
    timed_out = !cancelled && Clock::now() >= deadline;
    if (cancelled || timed_out) {
      tree.signal_all(SIGTERM);
      timer->expires_after(request.kill_grace);
      if (!*exited) co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      if (!*exited) tree.observe();
      tree.signal_all(SIGKILL);
      break;
    }
  }
  reaper.thread.join();
  tree.signal_all(SIGKILL);  // whatever the runner left behind must not perturb the next job
  if (!request.record_file.empty()) std::filesystem::remove(request.record_file);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  outcome.stdout_tail = tail_of(stdout_file);
  outcome.stderr_tail = tail_of(stderr_file);
  if (WIFEXITED(*status)) outcome.exit_code = WEXITSTATUS(*status);
  if (WIFSIGNALED(*status)) outcome.signal = WTERMSIG(*status);

  std::string problem;
  if (cancelled) {
    outcome.kind = ExecutionOutcome::Kind::cancelled;
    outcome.reason = "cancelled; its process group was killed";
  } else if (timed_out) {
    outcome.kind = ExecutionOutcome::Kind::timed_out;
    outcome.reason =
        "timed out after " + std::to_string(request.timeout.count() / 1000.0) + " s; its process group was killed";
  } else if (outcome.signal) {
    outcome.kind = ExecutionOutcome::Kind::crashed;
    outcome.reason = signal_reason(*outcome.signal);
  } else if (outcome.exit_code == exit_code::invalid_input) {
    outcome.kind = ExecutionOutcome::Kind::invalid_job;
    outcome.reason = "the runner refused the job (exit " + std::to_string(exit_code::invalid_input) + ")";
  } else if (outcome.exit_code == exit_code::ok || outcome.exit_code == exit_code::run_failed) {
    outcome.result = read_result(result_file, request.out_schema, problem);
    const bool ok = outcome.result && outcome.result->value("status", "ok") == "ok";
    if (outcome.result && outcome.exit_code == (ok ? exit_code::ok : exit_code::run_failed)) {
      outcome.kind = ok ? ExecutionOutcome::Kind::completed : ExecutionOutcome::Kind::run_failed;
      if (!ok) outcome.reason = outcome.result->value("error", "the runner reported a failure");
    } else {
      outcome.kind = ExecutionOutcome::Kind::crashed;
      outcome.reason = "exited with code " + std::to_string(*outcome.exit_code) + " but " +
                       (problem.empty() ? "its result status disagrees with its exit code" : problem);
    }
  } else {
    outcome.kind = ExecutionOutcome::Kind::crashed;
    outcome.reason = "exited with code " + std::to_string(*outcome.exit_code);
  }
  if (outcome.kind == ExecutionOutcome::Kind::crashed) {
    if (const auto line = failure_line(outcome.stderr_tail); !line.empty()) outcome.reason += " (" + line + ")";
  }
  if (outcome.kind != ExecutionOutcome::Kind::completed && outcome.kind != ExecutionOutcome::Kind::cancelled)
    log::warn("job ended {}: {}", to_string(outcome.kind), outcome.reason);
  co_return outcome;
}

}  // namespace ts::agent
