// The executor against runners that end every way a runner can end.
#include "agent/executor.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "agent/node/process_tree.hpp"
#include "agent/rank_launch.hpp"
#include "simulation/child_process.hpp"
#include "simulation/synthetic_result.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

using namespace std::chrono_literals;
using Kind = ExecutionOutcome::Kind;

class Executor : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ok = simulation::make_result({});
    std::ofstream(directory_ / "ok.json") << ok.dump();
    auto failed = ok;
    failed["status"] = "unsupported";
    failed["error"] = "fp16 is unsupported on this device";
    for (const char* key : {"execution", "timing", "loss", "memory"}) failed.erase(key);
    std::ofstream(directory_ / "failed.json") << failed.dump();
  }
  // A runner script: $2 is the job file, $4 where the result goes.
  std::filesystem::path runner(const std::string& name, const std::string& body) {
    const auto path = directory_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  ExecutionRequest request(const std::filesystem::path& executable, std::chrono::milliseconds timeout = 20s,
                           nlohmann::json job = {{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 8}}) {
    ExecutionRequest request;
    request.runner = executable;
    request.job = std::move(job);
    request.directory = directory_ / "work";
    request.timeout = timeout;
    request.kill_grace = 300ms;
    request.poll_interval = 50ms;
    return request;
  }
  ExecutionOutcome run(const std::filesystem::path& executable, std::chrono::milliseconds timeout = 20s,
                       nlohmann::json job = {{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 8}}) {
    return run(request(executable, timeout, std::move(job)));
  }
  ExecutionOutcome run(ExecutionRequest request) {
    boost::asio::io_context io;
    ExecutionOutcome outcome;
    boost::asio::co_spawn(io, execute(std::move(request)), [&](std::exception_ptr error, ExecutionOutcome result) {
      if (error) std::rethrow_exception(error);
      outcome = std::move(result);
    });
    io.run();
    return outcome;
  }

  testing::TempDirectory temp_{"ts_executor"};
  const std::filesystem::path& directory_ = temp_.path();
};

TEST_F(Executor, CompletedRunCarriesTheResultAndTheJobFileWasWritten) {
  const auto outcome =
      run(runner("ok.sh", "test -f \"$2\" || exit 9\ncp " + (directory_ / "ok.json").string() + " \"$4\""));
  EXPECT_EQ(outcome.kind, Kind::completed) << outcome.reason;
  ASSERT_TRUE(outcome.result.has_value());
  EXPECT_EQ(outcome.result->at("status"), "ok");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(outcome.reason.empty());
}

TEST_F(Executor, RunnerReportedFailureKeepsItsResultAndReason) {
  const auto outcome = run(runner("fail.sh", "cp " + (directory_ / "failed.json").string() + " \"$4\"\nexit 3"));
  EXPECT_EQ(outcome.kind, Kind::run_failed);
  EXPECT_EQ(outcome.reason, "fp16 is unsupported on this device");
  EXPECT_FALSE(outcome.retryable());
}

TEST_F(Executor, Exit2IsAnInvalidJob) {
  const auto outcome = run(runner("refuse.sh", "echo 'batch_size: must be >= 1' >&2\nexit 2"));
  EXPECT_EQ(outcome.kind, Kind::invalid_job);
  EXPECT_NE(outcome.stderr_tail.find("batch_size"), std::string::npos);
  EXPECT_FALSE(outcome.retryable());
}

TEST_F(Executor, KilledLikeAnOutOfMemoryKillIsACrashWithTheSignal) {
  const auto outcome = run(runner("oom.sh", "echo allocating >&2\nkill -9 $$"));
  EXPECT_EQ(outcome.kind, Kind::crashed);
  EXPECT_EQ(outcome.signal, SIGKILL);
  EXPECT_NE(outcome.reason.find("signal 9"), std::string::npos);
  EXPECT_NE(outcome.reason.find("out-of-memory"), std::string::npos);
  EXPECT_NE(outcome.stderr_tail.find("allocating"), std::string::npos);
  EXPECT_TRUE(outcome.retryable());
}

TEST_F(Executor, UnexpectedExitCodesAndMissingOrInvalidResultsAreCrashes) {
  auto outcome = run(runner("seven.sh", "exit 7"));
  EXPECT_EQ(outcome.kind, Kind::crashed);
  EXPECT_NE(outcome.reason.find("code 7"), std::string::npos);
  outcome = run(runner("silent.sh", "exit 0"));
  EXPECT_EQ(outcome.kind, Kind::crashed);
  EXPECT_NE(outcome.reason.find("no result document"), std::string::npos);
  outcome = run(runner("garbage.sh", "echo '{}' > \"$4\""));
  EXPECT_EQ(outcome.kind, Kind::crashed);
  EXPECT_NE(outcome.reason.find("invalid"), std::string::npos);
}

TEST_F(Executor, TimeoutKillsTheWholeProcessGroup) {
  const auto pid_file = directory_ / "grandchild.pid";
  const auto started = std::chrono::steady_clock::now();
  const auto outcome =
      run(runner("hang.sh", "sleep 1000 &\necho $! > " + pid_file.string() + "\ntrap '' TERM\nwait"), 500ms);
  EXPECT_EQ(outcome.kind, Kind::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  // The grandchild, in the same group, is gone too (reaped by init, or a zombie at worst).
  EXPECT_TRUE(simulation::wait_for(
      [&] {
        std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
        std::string pid, name, state;
        return !(stat >> pid >> name >> state) || state == "Z";
      },
      5s));
}

TEST_F(Executor, ShuttingDownMidJobKillsTheRunnerInsteadOfCrashing) {
  const auto pid_file = directory_ / "runner.pid";
  const auto hang = runner("long.sh", "echo $$ > " + pid_file.string() + "\nsleep 1000");
  {
    boost::asio::io_context io;
    boost::asio::co_spawn(io, execute(request(hang, 60s)), boost::asio::detached);
    ASSERT_TRUE(simulation::wait_for(
        [&] {
          io.poll();
          return std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0;
        },
        10s));
    io.stop();
  }  // the io_context and the waiting coroutine are destroyed here
  pid_t pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(simulation::wait_for([&] { return ::kill(pid, 0) != 0; }, 5s));
}

TEST_F(Executor, ProgressLinesAndTheEnvironmentReachTheRunner) {
  auto job = request(runner("progress.sh",
                            "echo '{\"epoch\":1,\"epochs\":2,\"seconds\":0.5}' >> \"$TORCHSWEEP_PROGRESS_FILE\"\n"
                            "sleep 0.2\n"
                            "echo 'not json' >> \"$TORCHSWEEP_PROGRESS_FILE\"\n"
                            "printf '{\"epoch\":2,\"epochs\":2,\"seconds\":0.25}\\n' >> \"$TORCHSWEEP_PROGRESS_FILE\"\n"
                            "test \"$CUDA_VISIBLE_DEVICES\" = 3,5 || exit 7\n"
                            "cp " +
                                (directory_ / "ok.json").string() + " \"$4\""));
  job.environment["CUDA_VISIBLE_DEVICES"] = "3,5";
  std::vector<nlohmann::json> lines;
  job.on_progress = [&](const nlohmann::json& line) { lines.push_back(line); };
  const auto outcome = run(std::move(job));
  EXPECT_EQ(outcome.kind, Kind::completed) << outcome.reason << outcome.stderr_tail;
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].at("epoch"), 1);
  EXPECT_EQ(lines[1].at("seconds"), 0.25);
}

TEST_F(Executor, CancellingKillsTheProcessGroup) {
  const auto pid_file = directory_ / "child.pid";
  auto job = request(runner("cancel.sh", "sleep 1000 &\necho $! > " + pid_file.string() + "\nwait"), 60s);
  const auto cancel = job.cancel_requested;
  boost::asio::io_context io;
  ExecutionOutcome outcome;
  boost::asio::co_spawn(io, execute(std::move(job)),
                        [&](std::exception_ptr, ExecutionOutcome result) { outcome = std::move(result); });
  ASSERT_TRUE(simulation::wait_for(
      [&] {
        io.poll();
        return std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0;
      },
      10s));
  *cancel = true;
  io.run();
  EXPECT_EQ(outcome.kind, Kind::cancelled) << outcome.reason;
  EXPECT_LT(outcome.seconds, 10.0);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  EXPECT_TRUE(simulation::wait_for([&] { return ::kill(grandchild, 0) != 0; }, 5s)) << "the runner's child survived";
}

TEST_F(Executor, TheRunnerGetsNoDescriptorOfTheAgent) {
  // Like an agent's sockets: open, and not close-on-exec.
  const auto secret = directory_ / "agent-only-descriptor";
  const int fd = ::open(secret.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 3);
  const auto listing = directory_ / "fds";
  const auto outcome = run(runner(
      "fds.sh", "ls -l /proc/$$/fd > " + listing.string() + "\ncp " + (directory_ / "ok.json").string() + " \"$4\""));
  ::close(fd);
  EXPECT_EQ(outcome.kind, Kind::completed) << outcome.reason;
  const auto fds = testing::slurp(listing);
  EXPECT_NE(fds.find("stdout.log"), std::string::npos) << fds;
  EXPECT_EQ(fds.find("agent-only-descriptor"), std::string::npos) << fds;
}

TEST_F(Executor, TheRunnerDiesWithTheThreadThatStartedIt) {
  const auto pid_file = directory_ / "runner.pid";
  const auto hang = runner("orphan.sh", "echo $$ > " + pid_file.string() + "\nexec sleep 1000");
  // The io_context outlives the thread: only the parent-death signal can
  // end the runner when that thread (the agent, in real life) is gone.
  boost::asio::io_context io;
  boost::asio::co_spawn(io, execute(request(hang, 60s)), boost::asio::detached);
  std::thread agent([&] {
    simulation::wait_for(
        [&] {
          io.poll();
          return std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0;
        },
        10s);
  });
  agent.join();
  pid_t pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(simulation::wait_for(
      [&] { return testing::slurp("/proc/" + std::to_string(pid) + "/cmdline").find("sleep") == std::string::npos; },
      5s));
}

TEST_F(Executor, RecordedProcessesOfAPreviousLifeAreKilledOnlyIfTheyAreStillTheSame) {
  simulation::ChildProcess survivor({"/bin/sleep", "1000"}, directory_ / "survivor.log");
  simulation::ChildProcess leftover({"/bin/sleep", "1000"}, directory_ / "leftover.log");
  ProcessTree(leftover.pid(), false).save(directory_ / "leftover.json");
  // The same pid with another start time: a recycled pid, to be left alone.
  std::ofstream(directory_ / "recycled.json")
      << nlohmann::json{{"root", {survivor.pid(), 1}}, {"descendants", nlohmann::json::array()}}.dump();
  EXPECT_EQ(ProcessTree::kill_recorded(directory_ / "recycled.json"), 0u);
  EXPECT_EQ(ProcessTree::kill_recorded(directory_ / "leftover.json"), 1u);
  EXPECT_EQ(leftover.wait_exit(5s), 128 + SIGKILL);
  EXPECT_FALSE(survivor.wait_exit(100ms).has_value());
  std::ofstream(directory_ / "garbage.json") << "{not json";
  EXPECT_EQ(ProcessTree::kill_recorded(directory_ / "garbage.json"), 0u);
}

TEST_F(Executor, MissingRunnerFailsToLaunch) {
  const auto outcome = run(directory_ / "no-such-runner");
  EXPECT_EQ(outcome.kind, Kind::launch_failed);
  EXPECT_NE(outcome.reason.find("cannot start runner"), std::string::npos);
}

#ifdef TS_WORKER_BINARY
TEST_F(Executor, RunsTheRealWorker) {
  const auto outcome = run(TS_WORKER_BINARY, 120s,
                           {{"schema_version", 1},
                            {"job_id", "real-1"},
                            {"model", "mlp"},
                            {"batch_size", 8},
                            {"input_size", 16},
                            {"width", 16},
                            {"depth", 1},
                            {"num_classes", 4},
                            {"epochs", 1},
                            {"warmup", 1},
                            {"iters", 2}});
  EXPECT_EQ(outcome.kind, Kind::completed) << outcome.reason << outcome.stderr_tail;
  EXPECT_EQ(outcome.result->at("job").at("job_id"), "real-1");
}
// The ranks mpirun started for a job run in `directory`, by rank: the
// processes whose command line names the directory and whose environment
// carries an Open MPI rank.
std::map<int, pid_t> ranks_running_in(const std::filesystem::path& directory) {
  std::map<int, pid_t> ranks;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline, environment;
    std::getline(std::ifstream(entry.path() / "cmdline"), cmdline, '\x01');
    std::getline(std::ifstream(entry.path() / "environ"), environment, '\x01');
    if (cmdline.find(directory.string()) == std::string::npos || cmdline.starts_with("mpirun")) continue;
    const auto at = environment.find("OMPI_COMM_WORLD_RANK=");
    if (at == std::string::npos) continue;
    ranks[std::atoi(environment.c_str() + at + 21)] = static_cast<pid_t>(std::stol(name));
  }
  return ranks;
}

class MultiRank : public Executor {
 protected:
  nlohmann::json job(int64_t epochs) {
    return {{"schema_version", 1}, {"job_id", "ranks-1"}, {"model", "mlp"}, {"batch_size", 8},
            {"input_size", 16},    {"width", 16},         {"depth", 1},     {"num_classes", 4},
            {"epochs", epochs},    {"warmup", 1},         {"iters", 20},    {"gpus", 2}};
  }
  ExecutionRequest multi_rank_request(int64_t epochs, std::chrono::milliseconds timeout) {
    auto request = this->request(TS_WORKER_BINARY, timeout, job(epochs));
    request.launcher = mpirun_command(request.job, RankLaunchSettings{}, {"TORCHSWEEP_PROGRESS_FILE"});
    request.on_progress = [this](const nlohmann::json& line) { progress_.push_back(line); };
    return request;
  }
  // Runs a long job until its first epoch is reported, calls `act`, then
  // runs it to its end.
  ExecutionOutcome run_and_interrupt(ExecutionRequest request, const std::function<void()>& act) {
    boost::asio::io_context io;
    ExecutionOutcome outcome;
    boost::asio::co_spawn(io, execute(std::move(request)),
                          [&](std::exception_ptr, ExecutionOutcome result) { outcome = std::move(result); });
    EXPECT_TRUE(simulation::wait_for(
        [&] {
          io.poll();
          return !progress_.empty();
        },
        60s));
    act();
    io.run();
    return outcome;
  }
  std::vector<nlohmann::json> progress_;
};

TEST_F(MultiRank, RanksStartUnderMpirunAndRankZeroSpeaksForTheJob) {
  const auto outcome = run(multi_rank_request(3, 120s));
  ASSERT_EQ(outcome.kind, Kind::completed) << outcome.reason << outcome.stderr_tail;
  const auto& distributed = outcome.result->at("execution").at("distributed");
  EXPECT_EQ(distributed.at("ranks"), 2);
  EXPECT_EQ(distributed.at("backend"), "mpi");
  EXPECT_EQ(distributed.at("per_rank").size(), 2u);
  EXPECT_TRUE(distributed.at("replicas_identical").get<bool>());
  EXPECT_EQ(progress_.size(), 3u) << "one progress line per epoch, from rank 0 only";
}

TEST_F(MultiRank, ADeadRankFailsTheJobWithItsReasonLongBeforeTheTimeout) {
  const auto outcome = run_and_interrupt(multi_rank_request(100000, 300s), [&] {
    const auto ranks = ranks_running_in(directory_ / "work");
    ASSERT_TRUE(ranks.contains(1)) << "rank 1 not found";
    ::kill(ranks.at(1), SIGKILL);
  });
  EXPECT_EQ(outcome.kind, Kind::crashed) << outcome.reason;
  EXPECT_NE(outcome.reason.find("rank 1"), std::string::npos) << outcome.reason;
  EXPECT_LT(outcome.seconds, 60.0);
  EXPECT_TRUE(simulation::wait_for([&] { return ranks_running_in(directory_ / "work").empty(); }, 5s));
}

TEST_F(MultiRank, CancellingKillsEveryRank) {
  auto request = multi_rank_request(100000, 300s);
  const auto cancel = request.cancel_requested;
  const auto outcome = run_and_interrupt(std::move(request), [&] {
    EXPECT_EQ(ranks_running_in(directory_ / "work").size(), 2u);
    *cancel = true;
  });
  EXPECT_EQ(outcome.kind, Kind::cancelled) << outcome.reason;
  EXPECT_TRUE(simulation::wait_for([&] { return ranks_running_in(directory_ / "work").empty(); }, 5s))
      << "a rank survived the cancellation";
}
#endif

}  // namespace
}  // namespace ts::agent
