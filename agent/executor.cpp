#include "agent/executor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/process_tree.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/schema.hpp"

extern char** environ;

namespace ts::agent {
namespace {

using Clock = std::chrono::steady_clock;

// Posix spawn attributes and file actions as RAII values.
struct SpawnSetup {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::string signal_reason(int number) {
  std::string reason = "killed by signal " + std::to_string(number) + " (" + strsignal(number) + ")";
  if (number == SIGKILL) reason += "; the kernel's out-of-memory killer ends processes this way";
  return reason;
}

std::optional<nlohmann::json> read_result(const std::filesystem::path& file, std::string& problem) {
  static const schema::Validator validator("result.schema.json");
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
// (the agent shuts down mid-job), the child's whole group is killed and the
// thread joined, never left running.
struct Reaper {
  pid_t pid;
  std::thread thread;
  ~Reaper() {
    if (!thread.joinable()) return;
    ::kill(-pid, SIGKILL);
    thread.join();
  }
};

// The agent's environment with `extra` added or replaced, as "KEY=VALUE"
// strings for posix_spawn.
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
    if (line.find(" ERROR ") != std::string::npos) error = line;
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
  environment_map["TORCHSWEEP_PROGRESS_FILE"] = progress_file.string();
  auto environment_strings = child_environment(environment_map);
  std::vector<char*> environment;
  for (auto& entry : environment_strings) environment.push_back(entry.data());
  environment.push_back(nullptr);
  json_io::write_atomically(job_file.string(), request.job);

  const std::string runner = request.runner.string();
  auto arguments = request.launcher;
  arguments.insert(arguments.end(), {runner, "--job", job_file.string(), "--out", result_file.string()});
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int spawn_error = 0;
  {
    SpawnSetup setup;
    // Its own process group, so a timeout can kill everything it started.
    posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&setup.attributes, 0);
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    spawn_error = posix_spawnp(&pid, argv.front(), &setup.actions, &setup.attributes, argv.data(), environment.data());
  }
  if (spawn_error != 0) {
    outcome.kind = ExecutionOutcome::Kind::launch_failed;
    outcome.reason = std::string("cannot start ") + (request.launcher.empty() ? "runner " : "launcher ") +
                     argv.front() + ": " + std::strerror(spawn_error);
    co_return outcome;
  }
  // mpirun puts its ranks in process groups of their own.
  ProcessTree tree(pid, /*scan=*/!request.launcher.empty());

  // A reaper thread blocks in waitpid and wakes this coroutine by cancelling
  // its timer; between wake-ups (every poll_interval) progress is forwarded
  // and cancellation and the deadline are checked.
  const auto started = Clock::now();
  const auto deadline = started + request.timeout;
  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor);
  auto exited = std::make_shared<bool>(false);
  auto status = std::make_shared<int>(0);
  Reaper reaper{pid, std::thread([pid, status, timer, exited, executor] {
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
    tree.observe();
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
  } else if (outcome.exit_code == 2) {
    outcome.kind = ExecutionOutcome::Kind::invalid_job;
    outcome.reason = "the runner refused the job (exit 2)";
  } else if (outcome.exit_code == 0 || outcome.exit_code == 3) {
    outcome.result = read_result(result_file, problem);
    const bool ok = outcome.result && outcome.result->at("status") == "ok";
    if (outcome.result && outcome.exit_code == (ok ? 0 : 3)) {
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
