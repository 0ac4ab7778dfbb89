// The coordinator under load (issue 5, benchmark a): a real `torchsweep
// coordinator` process with its store, N simulated agents on loopback that
// answer every assignment at once with a canned result, and one sweep of J
// jobs. Measures jobs dispatched and results stored per second end to end
// (submission to the last result stored) and the coordinator's peak RSS.
// Target: at least 2,000 jobs/s.
//
//   bench_scheduling_throughput [agents=200] [jobs=20000] [workdir=/tmp/ts_bench_scheduling]
#include <unistd.h>

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/coordinator_probe.hpp"
#include "shared/wire/protocol.hpp"
#include "simulation/child_process.hpp"
#include "simulation/simulated_agent.hpp"

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

}  // namespace

int main(int argc, char** argv) {
  const int agents = argc > 1 ? std::stoi(argv[1]) : 200;
  const int jobs = argc > 2 ? std::stoi(argv[2]) : 20000;
  const std::filesystem::path directory = argc > 3 ? argv[3] : "/tmp/ts_bench_scheduling";
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);

  const auto port_file = directory / "port";
  ts::simulation::ChildProcess coordinator(
      {TS_TORCHSWEEP_BINARY, "--log-level", "warn", "coordinator", "--listen", "127.0.0.1:0", "--port-file",
       port_file.string(), "--db", (directory / "store.db").string()},
      directory / "coordinator.log");
  if (!ts::simulation::wait_for([&] { return std::filesystem::exists(port_file); }, std::chrono::seconds(10))) {
    std::fprintf(stderr, "the coordinator did not start; see %s\n", (directory / "coordinator.log").c_str());
    return 1;
  }
  uint16_t port = 0;
  std::ifstream(port_file) >> port;

  asio::io_context io;
  std::vector<std::unique_ptr<ts::simulation::SimulatedAgent>> simulated;
  for (int i = 0; i < agents; ++i) {
    simulated.push_back(std::make_unique<ts::simulation::SimulatedAgent>(
        io, ts::wire::Endpoint{"127.0.0.1", port}, "sim-" + std::to_string(i), 0, std::chrono::milliseconds(0)));
    simulated.back()->start();
  }
  // J jobs: batch sizes 1..100 as the configurations, the rest as repeats.
  nlohmann::json batch_sizes = nlohmann::json::array();
  for (int b = 1; b <= 100; ++b) batch_sizes.push_back(b);
  const nlohmann::json sweep{{"name", "bench"},
                             {"axes", {{"batch_size", batch_sizes}}},
                             {"fixed", {{"model", "mlp"}}},
                             {"repeats", std::max(1, jobs / 100)}};
  double submit_seconds = 0, total_seconds = 0, cpu_before = 0, cpu_used = 0;
  std::size_t stored = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io, std::chrono::milliseconds(500));  // let the agents say hello
        co_await timer.async_wait(asio::use_awaitable);
        const auto start = Clock::now();
        cpu_before = ts::bench::cpu_seconds(coordinator.pid());
        const auto submitted =
            co_await ts::bench::request(io, port, ts::wire::make_message("submit", {{"sweep", sweep}}));
        submit_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        const auto total = submitted.at("jobs").get<std::size_t>();
        auto last_progress = Clock::now();
        while (stored < total) {
          timer.expires_after(std::chrono::milliseconds(50));
          co_await timer.async_wait(asio::use_awaitable);
          const auto status = co_await ts::bench::request(io, port, ts::wire::make_message("status"));
          const auto done = static_cast<std::size_t>(status.at("sweeps").at(0).at("jobs").value("done", 0));
          if (done > stored) last_progress = Clock::now();
          stored = done;
          if (Clock::now() - last_progress > std::chrono::seconds(30)) {
            throw std::runtime_error("no job finished for 30 s; see the coordinator's log");
          }
        }
        total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        cpu_used = ts::bench::cpu_seconds(coordinator.pid()) - cpu_before;
        for (auto& agent : simulated) agent->stop();
      },
      [&](std::exception_ptr error) {
        if (error) std::rethrow_exception(error);
      });
  io.run();
  std::size_t completed = 0;
  for (const auto& agent : simulated) completed += agent->stats().completed;
  std::printf("agents %d, jobs %zu (answered %zu)\n", agents, stored, completed);
  std::printf("submit (expand + store %zu jobs): %.3f s\n", stored, submit_seconds);
  std::printf("end to end (submit to last result stored): %.3f s = %.0f jobs/s\n", total_seconds,
              static_cast<double>(stored) / total_seconds);
  std::printf("coordinator CPU: %.2f s (%.0f us per job)\n", cpu_used, 1e6 * cpu_used / static_cast<double>(stored));
  std::printf("coordinator peak RSS: %.1f MiB\n",
              static_cast<double>(ts::bench::status_kib(coordinator.pid(), "VmHWM")) / 1024.0);
  return 0;
}
