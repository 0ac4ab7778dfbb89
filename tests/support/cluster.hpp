#pragma once
// A test fixture of real torchsweep processes on 127.0.0.1: a coordinator
// on an ephemeral port with its own store, agents, and the CLI. Logs of a
// failed test are printed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "simulation/child_process.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/migrations.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::testing {

using simulation::ChildProcess;
using simulation::make_result;
using simulation::wait_for;

using namespace std::chrono_literals;

class Cluster : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(violations(), "") << "two runners of one job were alive at once";
    agents_.clear();
    coordinator_.reset();
    if (HasFailure()) {
      for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
        if (entry.path().extension() == ".log") std::cerr << "--- " << entry.path() << "\n" << slurp(entry.path());
      }
    }
  }

  // Starts a coordinator on a free port (or `port`) and waits for it to listen.
  void start_coordinator(int port = 0, std::vector<std::string> extra = {}) {
    const auto port_file = directory_ / "port";
    std::filesystem::remove(port_file);
    auto argv = coordinator_binary_prefix_;
    argv.insert(argv.end(), {TS_TORCHSWEEP_BINARY, "coordinator", "--listen", host_ + ":" + std::to_string(port),
                             "--port-file", port_file.string(), "--heartbeat-s", "0.5", "--reattach-grace-s",
                             reattach_grace_s_, "--db", db().string()});
    argv.insert(argv.end(), extra.begin(), extra.end());
    coordinator_ = std::make_unique<ChildProcess>(argv, directory_ / "coordinator.log");
    ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(port_file); }, 10s));
    std::ifstream(port_file) >> port_;
  }
  ChildProcess& start_agent(const std::string& name, std::vector<std::string> extra = {}) {
    auto argv = agent_binary_prefix_;
    argv.insert(argv.end(), {TS_TORCHSWEEP_BINARY, "agent", "--coordinator", endpoint(), "--name", name, "--work-dir",
                             (directory_ / ("work-" + name)).string()});
    // The fake runner stands in for the worker here: no peak to measure, and
    // no Python runner to start for its --version at every agent start.
    if (std::find(extra.begin(), extra.end(), "--peak-probe") == extra.end()) {
      argv.insert(argv.end(), {"--peak-probe", "off"});
    }
    argv.push_back("--no-default-runners");
    argv.insert(argv.end(), extra.begin(), extra.end());
    agents_.push_back(std::make_unique<ChildProcess>(argv, directory_ / (name + ".log")));
    return *agents_.back();
  }
  std::string endpoint() const { return host_ + ":" + std::to_string(port_); }
  std::filesystem::path db() const { return directory_ / "store.db"; }

  Finished torchsweep(std::vector<std::string> args) {
    args.insert(args.begin(), TS_TORCHSWEEP_BINARY);
    return run_program(args);
  }
  nlohmann::json status() {
    const auto finished = torchsweep({"status", "--json", "--coordinator", endpoint()});
    if (finished.exit_code != 0) return nullptr;
    return nlohmann::json::parse(finished.out);
  }
  std::vector<std::string> agent_names() {
    const auto reply = status();
    if (reply.is_null()) return {"<status failed>"};
    std::vector<std::string> names;
    for (const auto& agent : reply.at("agents")) names.push_back(agent.at("name"));
    return names;
  }
  // Jobs of the (only or named) sweep in `state`, per the coordinator.
  int64_t jobs_in(const std::string& state, std::size_t sweep = 0) {
    const auto reply = status();
    if (reply.is_null() || reply.at("sweeps").size() <= sweep) return -1;
    return reply.at("sweeps").at(sweep).at("jobs").value(state, int64_t{0});
  }
  std::string sweep_state(std::size_t sweep = 0) {
    const auto reply = status();
    if (reply.is_null() || reply.at("sweeps").size() <= sweep) return "<none>";
    return reply.at("sweeps").at(sweep).at("state");
  }
  // The rows `sql` selects from the store, read straight from the file
  // (read-only), one "a|b|c" line each, as the sqlite3 shell prints them.
  std::string store_rows(const std::string& sql) const {
    auto database = store::open_read_only(db().string());
    auto select = database.prepare(sql);
    std::string rows;
    while (select.step()) {
      for (int column = 0; column < select.columns(); ++column) rows += (column ? "|" : "") + select.text(column);
      rows += "\n";
    }
    return rows;
  }
  // The stored results as exported JSON rows.
  nlohmann::json results(std::vector<std::string> filters = {}) {
    std::vector<std::string> args{"export", "--db", db().string(), "--format", "json", "--include-failed"};
    args.insert(args.end(), filters.begin(), filters.end());
    const auto finished = torchsweep(args);
    EXPECT_EQ(finished.exit_code, 0) << finished.err;
    return nlohmann::json::parse(finished.out);
  }

  // Stored results per job id.
  std::map<std::string, int> results_per_job(std::vector<std::string> filters = {}) {
    std::map<std::string, int> count;
    for (const auto& row : results(std::move(filters))) ++count[row.at("job_id").get<std::string>()];
    return count;
  }

  // A runner honouring the worker contract, in Python, that answers with a
  // synthetic result after `labels.sleep` seconds; `labels.behaviour` makes
  // it crash (exit 1), crash on its first attempt, or refuse the job (exit 2);
  // `labels.pid_file` gets its pid. Compiled jobs report half the time,
  // `labels.noise` scatters each job's times by up to that fraction,
  // `labels.epoch_noise` each epoch's by a Gaussian of that spread,
  // `labels.scale_file` (a number in a file) scales them, and
  // `labels.host_scale` ("HOST=FACTOR ...") scales those of the hosts it
  // names; `labels.scale_from_model` reads a factor from the model's code
  // (a file under model_root); as a Python runner, its environment's
  // interpreter may scale them too (below). Results name the host the runner ran on, as a real runner's do;
  // a job with a profile gets one whose operators add up to its step.
  // It is also the witness of "one live attempt per job": for its whole life
  // it holds an exclusive lock on a file of its job, and records a violation
  // when another runner of the same job holds it (violations()); every
  // runner's pid is listed for live_runners().
  std::filesystem::path fake_runner() {
    const auto template_file = directory_ / "result-template.json";
    std::ofstream(template_file) << make_result({}).dump();
    const auto path = directory_ / "fake_runner.py";
    std::ofstream(path) << R"(#!/usr/bin/env python3
import fcntl, json, os, socket, sys, time
# As a Python runner (--python-runner), in environments whose interpreter sets TS_FAKE_TORCH (the PyTorch
# version it reports) and TS_FAKE_SCALE (a factor of its times; "alternate": 0.7 and 1.6 in turn, by the
# count in TS_FAKE_COUNTER): it answers the agent's probes as a real runner does.
# In a venv (one torchsweep-make-environment made from the bisection test's wheels), its fake torch's
# version and SLOWDOWN instead: never the system's real torch, whose import would cost every job seconds.
fake_torch = __import__("torch") if sys.prefix != sys.base_prefix else None
if sys.argv[1:] == ["--version"]:
    print("torchsweep-fake 0 (test)\ntorch %s\nmodes eager compiled\nprecisions fp32\ntasks train infer"
          % (fake_torch.__version__ if fake_torch else os.environ.get("TS_FAKE_TORCH", "none")))
    sys.exit(0)
if sys.argv[1:] == ["--list-models"]:
    print("model\nmlp\npython:*")
    sys.exit(0)
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
job = json.load(open(args["--job"]))
labels = job.get("labels", {})
if "pid_file" in labels:
    open(labels["pid_file"], "w").write(str(os.getpid()))
witness = ")" + witness_directory().string() +
                               R"("
os.makedirs(witness, exist_ok=True)
attempt = job.get("attempt", 1)
lock = open(os.path.join(witness, job["job_id"].replace("/", "_") + ".lock"), "a")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    with open(os.path.join(witness, "violations"), "a") as out:
        out.write("%s attempt %d started while another runner of the job was alive\n" % (job["job_id"], attempt))
with open(os.path.join(witness, "runners"), "a") as out:
    out.write("%d %s %d\n" % (os.getpid(), job["job_id"], attempt))
behaviour = labels.get("behaviour", "ok")
if behaviour == "refuse":
    sys.exit(2)
if behaviour == "crash" or (behaviour == "crash-first" and job.get("attempt", 1) == 1):
    sys.exit(1)
progress = os.environ.get("TORCHSWEEP_PROGRESS_FILE")
time.sleep(float(labels.get("sleep", "0")))
if progress:
    with open(progress, "a") as out:
        out.write(json.dumps({"epoch": 1, "epochs": 1, "seconds": 0.01}) + "\n")
result = json.load(open(")" + template_file.string() +
                               R"("))
result["job"] = job
result["context"]["hostname"] = socket.gethostname()
# The job's runner answers under its own name, and its environment's PyTorch version is what its runs report.
result["runner"]["name"] = job.get("runner", result["runner"]["name"])
if fake_torch or "TS_FAKE_TORCH" in os.environ:
    result["context"]["torch_version"] = fake_torch.__version__ if fake_torch else os.environ["TS_FAKE_TORCH"]
scale = 0.5 if job.get("mode") == "compiled" else 1.0
# labels.host_scale: "HOST=FACTOR ...": a node that is slower or faster than the others.
scale *= dict((entry.split("=")[0], float(entry.split("=")[1])) for entry in labels.get("host_scale", "").split()).get(
    socket.gethostname(), 1.0)
# labels.scale_file: a file holding a factor for every job's times, read when
# the job runs, so a test can slow the "code" down between two sweeps.
# What a test planted (the scale file, a slow environment, the model code's SCALE): a profile's fake::slow_path.
planted = 1.0
if "scale_file" in labels and os.path.exists(labels["scale_file"]):
    planted *= float(open(labels["scale_file"]).read())
# labels.noise: each job's times off by up to that fraction, drawn from its
# ordinal (the same sweep file gives the same draws on every run).
scale *= 1.0 + float(labels.get("noise", "0")) * __import__("random").Random(int(job["job_id"].split("/")[-1])).uniform(-1, 1)
environment_scale = os.environ.get("TS_FAKE_SCALE", "1")
if environment_scale == "alternate":
    counter = os.environ["TS_FAKE_COUNTER"]
    count = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(count + 1))
    scale *= 0.7 if count % 2 else 1.6
else:
    planted *= float(environment_scale)
planted *= fake_torch.SLOWDOWN if fake_torch else 1.0
# labels.scale_from_model: a file under the job's model_root holding "SCALE = x": the user's model code (at a
# commit, for torchsweep bisect --repo) sets the speed.
if "scale_from_model" in labels:
    code = open(os.path.join(job["model_root"], labels["scale_from_model"])).read()
    planted *= float(code.split("SCALE =")[1].split()[0])
scale *= planted
result["execution"]["mode"] = job.get("mode", "eager")
timing = result["timing"]
timing["epoch_seconds"] = [t * scale * job["batch_size"] for t in timing["epoch_seconds"]]
timing["step_seconds"] = [[s * scale * job["batch_size"] for s in e] for e in timing["step_seconds"]]
timing["median_epoch_seconds"] *= scale * job["batch_size"]
timing["median_step_seconds"] *= scale * job["batch_size"]
# labels.epoch_noise: instead of the template's fixed pattern, each epoch off
# by its own Gaussian draw of that spread on the log scale (drawn from the
# ordinal too): docs/noise.md's model within a process.
if "epoch_noise" in labels:
    draw = __import__("random").Random(1000003 * int(job["job_id"].split("/")[-1]) + 7)
    iters = len(timing["step_seconds"][0])
    timing["epoch_seconds"] = [timing["median_epoch_seconds"] * __import__("math").exp(
        float(labels["epoch_noise"]) * draw.gauss(0, 1)) for _ in timing["epoch_seconds"]]
    timing["step_seconds"] = [[t / iters] * iters for t in timing["epoch_seconds"]]
    timing["median_epoch_seconds"] = sorted(timing["epoch_seconds"])[len(timing["epoch_seconds"]) // 2]
    timing["median_step_seconds"] = timing["median_epoch_seconds"] / iters
# job.profile: a profile section (docs/explain.md) whose operators add up to the step: the work, and what
# the planted factor added to it as fake::slow_path, which explain names.
if job.get("profile"):
    step = timing["median_step_seconds"]
    rows = [("fake::work", 4, 0.9 * step / planted), ("fake::slow_path", 2, step - step / planted)]
    operators = [{"name": name, "calls": calls, "self_cpu_s": seconds, "cpu_total_s": seconds,
                  "self_device_s": 0.0, "device_total_s": 0.0} for name, calls, seconds in rows if seconds > 0]
    result["profile"] = {"status": "ok", "profiler": "fake", "steps": 2, "activities": ["cpu"],
                         "record_shapes": False, "memory": False, "with_stack": False, "step_seconds": [step, step],
                         "operators": operators, "kernels": [],
                         "totals": {"operators": len(operators), "self_cpu_s": sum(o["self_cpu_s"] for o in operators),
                                    "self_device_s": 0.0, "kernels": 0, "kernel_s": 0.0}}
json.dump(result, open(args["--out"], "w"))
)";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  std::filesystem::path witness_directory() const { return directory_ / "witness"; }
  // What the fake runners' witness recorded: one line per overlapping runner.
  std::string violations() const { return slurp(witness_directory() / "violations"); }
  // Fake runners still alive (their pid lives and still runs fake_runner.py).
  std::vector<std::string> live_runners() const {
    std::vector<std::string> alive;
    std::ifstream in(witness_directory() / "runners");
    std::string pid, job, attempt;
    while (in >> pid >> job >> attempt) {
      if (slurp("/proc/" + pid + "/cmdline").find("fake_runner.py") != std::string::npos) {
        alive.push_back(job + " attempt " + attempt + " (pid " + pid + ")");
      }
    }
    return alive;
  }
  std::filesystem::path write_file(const std::string& name, const std::string& text) {
    std::ofstream(directory_ / name) << text;
    return directory_ / name;
  }

  TempDirectory temp_{"ts_cluster"};
  const std::filesystem::path& directory_ = temp_.path();
  int port_ = 0;
  std::string reattach_grace_s_ = "2";  // --reattach-grace-s of start_coordinator()
  std::string host_ = "127.0.0.1";      // where the coordinator listens
  // Commands the coordinator and the agents are started under (prlimit, ip netns exec).
  std::vector<std::string> coordinator_binary_prefix_, agent_binary_prefix_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::vector<std::unique_ptr<ChildProcess>> agents_;
};

}  // namespace ts::testing
