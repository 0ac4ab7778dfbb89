// A fleet, simulated (issue 16): a real `torchsweep coordinator` process
// with N simulated agents on loopback heartbeating at the coordinator's
// default interval (2 s), then a sweep of J jobs. Prints
//   - memory per connected agent and per queued job (the coordinator's RSS);
//   - coordinator CPU per heartbeat (an idle fleet) and per job;
//   - jobs/s end to end (submission to the last result stored);
//   - the longest pause of the coordinator's event loop (its /metrics), and
//     with a sweep that no agent can take queued;
//   - the agent sessions it dropped meanwhile (its log).
//
//   bench_fleet_scale [agents=5000] [jobs=50000] [idle_s=20] [workdir=/tmp/ts_bench_fleet] [lists=digest]
//
// lists: what each agent's hello says of its runners' models, as agents
// with three library environments do (three lists of 1,600 names, about
// 120 KB): `digest` (each list by its digest, sent once to the coordinator:
// shared/model_lists.hpp), `inline` (the names in every hello, as before
// #53), or `none`. TS_BENCH_TORCHSWEEP names another `torchsweep` to run as
// the coordinator (an earlier build, for a before-and-after figure).
#include <fmt/format.h>
#include <sys/resource.h>

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "bench/coordinator_probe.hpp"
#include "shared/model_lists.hpp"
#include "simulation/child_process.hpp"
#include "simulation/simulated_agent.hpp"

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using ts::bench::cpu_seconds;
using ts::bench::status_kib;

constexpr std::chrono::milliseconds default_heartbeat{2000};  // CoordinatorOptions' default

asio::awaitable<void> sleep_for(asio::io_context& io, std::chrono::milliseconds duration) {
  asio::steady_timer timer(io, duration);
  co_await timer.async_wait(asio::use_awaitable);
}

nlohmann::json sweep_of(int jobs, bool placeable) {
  nlohmann::json batch_sizes = nlohmann::json::array();
  for (int b = 1; b <= 100; ++b) batch_sizes.push_back(b);
  nlohmann::json fixed{{"model", "mlp"}};
  // A GPU job no simulated agent (they have none) can take: it stays queued.
  if (!placeable) fixed.update({{"device", "cuda"}, {"gpus", 1}});
  return {{"name", placeable ? "fleet" : "queued"},
          {"axes", {{"batch_size", batch_sizes}}},
          {"fixed", fixed},
          {"repeats", std::max(1, jobs / 100)}};
}

// A `torchsweep coordinator` process of its own, with its store and /metrics.
struct Coordinator {
  Coordinator(const std::filesystem::path& directory, int agents)
      : process(
            [&] {
              std::filesystem::create_directories(directory);
              const char* other = std::getenv("TS_BENCH_TORCHSWEEP");
              return std::vector<std::string>{other ? other : TS_TORCHSWEEP_BINARY,
                                              "--log-level",
                                              "warn",
                                              "coordinator",
                                              "--listen",
                                              "127.0.0.1:0",
                                              "--port-file",
                                              (directory / "port").string(),
                                              "--db",
                                              (directory / "store.db").string(),
                                              "--max-connections",
                                              std::to_string(agents + 100),
                                              "--metrics-listen",
                                              "127.0.0.1:0",
                                              "--metrics-port-file",
                                              (directory / "metrics-port").string()};
            }(),
            directory / "coordinator.log") {
    if (!ts::simulation::wait_for(
            [&] {
              return std::filesystem::exists(directory / "port") && std::filesystem::exists(directory / "metrics-port");
            },
            std::chrono::seconds(10))) {
      throw std::runtime_error("the coordinator did not start; see " + (directory / "coordinator.log").string());
    }
    std::ifstream(directory / "port") >> port;
    std::ifstream(directory / "metrics-port") >> metrics_port;
  }
  pid_t pid() const { return process.pid(); }
  ts::simulation::ChildProcess process;
  uint16_t port = 0, metrics_port = 0;
};

}  // namespace

// Three environments' library models for one runner: distinct lists of
// 1,600 names each, the same on every agent (one image).
nlohmann::json library_models() {
  nlohmann::json models{{"models", {{"libtorch", {"mlp", "resnet18", "gpt"}}}},
                        {"environments", nlohmann::json::object()}};
  for (const auto* environment : {"torch-2.6", "torch-2.9", "torch-2.15"}) {
    nlohmann::json names = nlohmann::json::array();
    for (int n = 0; n < 1600; ++n) names.push_back(fmt::format("timm:{}_model_{:04}", environment, n));
    models["environments"][environment] = {
        {"python", nullptr}, {"runners", {{"libtorch", {{"torch", environment}}}}}, {"models", {{"libtorch", names}}}};
  }
  return models;
}

int main(int argc, char** argv) {
  const int agents = argc > 1 ? std::stoi(argv[1]) : 5000;
  const int jobs = argc > 2 ? std::stoi(argv[2]) : 50000;
  const int idle_s = argc > 3 ? std::stoi(argv[3]) : 20;
  const std::filesystem::path directory = argc > 4 ? argv[4] : "/tmp/ts_bench_fleet";
  const std::string lists = argc > 5 ? argv[5] : "digest";
  if (lists != "digest" && lists != "inline" && lists != "none") {
    std::fprintf(stderr, "lists: digest, inline or none, not %s\n", lists.c_str());
    return 2;
  }
  auto models = std::make_shared<ts::simulation::SimulatedAgent::Models>();
  if (lists != "none") models->capabilities = library_models();
  if (lists == "digest") models->lists = ts::model_lists::replace_by_digests(models->capabilities);
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  // This process holds one socket per agent too: the soft limit up to the hard one.
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);

  Coordinator queued_only(directory / "queued", agents);
  Coordinator fleet(directory / "fleet", agents);
  asio::io_context io;
  std::vector<std::unique_ptr<ts::simulation::SimulatedAgent>> simulated;
  double connect_s = 0, per_agent_kib = 0, per_heartbeat_us = 0, per_queued_bytes = 0, submit_s = 0, total_s = 0,
         per_job_us = 0, submit_queued_s = 0, unplaceable_pause_s = 0;
  std::size_t stored = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        // Queued jobs' memory, in a coordinator of its own that no agent
        // joins: a sweep no agent could take. (With agents connected, each
        // would scan the whole queue of such jobs at every dispatch:
        // docs/benchmarks.md.)
        const long before_kib = status_kib(queued_only.pid(), "VmRSS");
        const auto queued = co_await ts::bench::request(
            io, queued_only.port, ts::wire::make_message("submit", {{"sweep", sweep_of(jobs, false)}}));
        co_await sleep_for(io, std::chrono::seconds(1));
        per_queued_bytes = 1024.0 * static_cast<double>(status_kib(queued_only.pid(), "VmRSS") - before_kib) /
                           queued.at("jobs").get<double>();
        submit_queued_s = ts::bench::scrape(queued_only.metrics_port, "torchsweep_event_loop_lag_max_seconds");

        const long base_kib = status_kib(fleet.pid(), "VmRSS");
        const auto connecting = Clock::now();
        for (int i = 0; i < agents; ++i) {
          simulated.push_back(std::make_unique<ts::simulation::SimulatedAgent>(
              io, ts::wire::Endpoint{"127.0.0.1", fleet.port}, "sim-" + std::to_string(i), 0,
              std::chrono::milliseconds(0), default_heartbeat, models));
          simulated.back()->start();
          if (i % 200 == 199) co_await sleep_for(io, std::chrono::milliseconds(10));  // no accept-queue overflow
        }
        while (true) {
          const auto status = co_await ts::bench::request(io, fleet.port, ts::wire::make_message("status"));
          if (status.at("agents").size() == static_cast<std::size_t>(agents)) break;
          co_await sleep_for(io, std::chrono::milliseconds(200));
          if (Clock::now() - connecting > std::chrono::seconds(120)) throw std::runtime_error("agents did not connect");
        }
        connect_s = std::chrono::duration<double>(Clock::now() - connecting).count();
        co_await sleep_for(io, std::chrono::seconds(2));
        per_agent_kib = static_cast<double>(status_kib(fleet.pid(), "VmRSS") - base_kib) / agents;

        // An idle fleet: only heartbeats (both ways) and the housekeeping.
        const double idle_cpu = cpu_seconds(fleet.pid());
        co_await sleep_for(io, std::chrono::seconds(idle_s));
        const double heartbeat_cpu_per_s = (cpu_seconds(fleet.pid()) - idle_cpu) / idle_s;
        const double heartbeats_per_s = agents * 1000.0 / static_cast<double>(default_heartbeat.count());
        per_heartbeat_us = 1e6 * heartbeat_cpu_per_s / heartbeats_per_s;

        // A sweep no agent can take, with the fleet connected: each agent
        // with room looks at the queue at every dispatch. Cancelled before
        // the sweep below.
        const auto unplaceable = co_await ts::bench::request(
            io, fleet.port, ts::wire::make_message("submit", {{"sweep", sweep_of(jobs, false)}}));
        co_await sleep_for(io, std::chrono::seconds(10));  // heartbeats, and the dispatches they bring
        unplaceable_pause_s = ts::bench::scrape(fleet.metrics_port, "torchsweep_event_loop_lag_max_seconds");
        co_await ts::bench::request(io, fleet.port,
                                    ts::wire::make_message("cancel", {{"sweep", unplaceable.at("sweep_id")}}));

        // The sweep, end to end.
        const auto start = Clock::now();
        const double cpu_before = cpu_seconds(fleet.pid());
        const auto submitted = co_await ts::bench::request(
            io, fleet.port, ts::wire::make_message("submit", {{"sweep", sweep_of(jobs, true)}}));
        submit_s = std::chrono::duration<double>(Clock::now() - start).count();
        const auto sweep_id = submitted.at("sweep_id").get<std::string>();
        // As `run` and `nightly` poll; a coordinator from before #53 (TS_BENCH_TORCHSWEEP) knows no agents: false.
        nlohmann::json sweep_status{{"sweep", sweep_id}};
        if (!std::getenv("TS_BENCH_TORCHSWEEP")) sweep_status["agents"] = false;
        const auto total = submitted.at("jobs").get<std::size_t>();
        auto last_progress = Clock::now();
        while (stored < total) {
          co_await sleep_for(io, std::chrono::milliseconds(100));
          const auto status =
              co_await ts::bench::request(io, fleet.port, ts::wire::make_message("status", sweep_status));
          const auto done = static_cast<std::size_t>(status.at("sweeps").at(0).at("jobs").value("done", 0));
          if (done > stored) last_progress = Clock::now();
          stored = done;
          if (Clock::now() - last_progress > std::chrono::seconds(30)) {
            throw std::runtime_error("no job finished for 30 s; see the coordinator's log");
          }
        }
        total_s = std::chrono::duration<double>(Clock::now() - start).count();
        const double job_cpu = cpu_seconds(fleet.pid()) - cpu_before - heartbeat_cpu_per_s * total_s;
        per_job_us = 1e6 * job_cpu / static_cast<double>(stored);
        for (auto& agent : simulated) agent->stop();
      },
      [&](std::exception_ptr error) {
        if (error) std::rethrow_exception(error);
      });
  io.run();
  std::printf("agents %d connected in %.1f s, heartbeating every %.1f s; jobs %zu\n", agents, connect_s,
              static_cast<double>(default_heartbeat.count()) / 1000.0, stored);
  std::printf("memory per connected agent: %.1f KiB (model lists: %s)\n", per_agent_kib, lists.c_str());
  std::printf("memory per queued job: %.0f bytes\n", per_queued_bytes);
  std::printf("coordinator CPU per heartbeat (idle fleet, %d s): %.1f us\n", idle_s, per_heartbeat_us);
  std::printf("submit (expand + store %zu jobs): %.2f s\n", stored, submit_s);
  std::printf("end to end (submit to last result stored): %.2f s = %.0f jobs/s\n", total_s,
              static_cast<double>(stored) / total_s);
  std::printf("coordinator CPU per job (heartbeats' share taken out): %.0f us\n", per_job_us);
  std::printf("longest event-loop pause: %.3f s with the fleet and its sweep; %.3f s submitting %d queued jobs alone\n",
              ts::bench::scrape(fleet.metrics_port, "torchsweep_event_loop_lag_max_seconds"), submit_queued_s, jobs);
  std::printf("longest event-loop pause with %d jobs no agent can take queued and the fleet connected: %.3f s\n", jobs,
              unplaceable_pause_s);
  std::printf("coordinator peak RSS: %.1f MiB\n", static_cast<double>(status_kib(fleet.pid(), "VmHWM")) / 1024.0);
  // Sessions the coordinator ended for silence (or lost) while the fleet ran.
  std::ifstream log(directory / "fleet" / "coordinator.log");
  int dropped = 0;
  for (std::string line; std::getline(log, line);) dropped += line.find(") disconnected") != std::string::npos;
  std::printf("agent sessions dropped: %d of %d\n", dropped, agents);
  return 0;
}
