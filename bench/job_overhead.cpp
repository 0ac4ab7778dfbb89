// Per-job orchestration overhead (issue 5, benchmark b): a coordinator and
// one real agent in this process, the agent spawning a no-op runner for
// each job (its own process group, files, progress polling, result
// validation) and the coordinator storing each result. Measures, per job,
// the time from assignment to the stored result; prints median and p99.
// Target: median under 20 ms.
//
//   bench_job_overhead [jobs=200] [workdir=/tmp/ts_bench_overhead]
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "agent/agent.hpp"
#include "coordinator/coordinator.hpp"
#include "shared/log.hpp"
#include "shared/statistics.hpp"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const int jobs = argc > 1 ? std::stoi(argv[1]) : 200;
  const std::filesystem::path directory = argc > 2 ? argv[2] : "/tmp/ts_bench_overhead";
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  ts::log::set_level(ts::log::Level::warn);

  ts::store::Store store((directory / "store.db").string());
  boost::asio::io_context io;
  ts::coordinator::CoordinatorOptions coordinator_options;
  coordinator_options.listen = {"127.0.0.1", 0};
  ts::coordinator::Coordinator coordinator(io, coordinator_options, store);
  coordinator.start();
  ts::agent::AgentOptions agent_options;
  agent_options.coordinator = {"127.0.0.1", coordinator.port()};
  agent_options.name = "bench";
  agent_options.runners = {{"libtorch", TS_NOOP_RUNNER}};
  agent_options.work_directory = directory / "agent";
  ts::agent::Agent agent(io, agent_options);
  agent.start();

  nlohmann::json batch_sizes = nlohmann::json::array();
  for (int b = 1; b <= jobs; ++b) batch_sizes.push_back(b);
  std::map<std::string, Clock::time_point> assigned;
  std::vector<double> overhead_ms;
  coordinator.on_event([&](const ts::coordinator::JobEvent& event) {
    using Kind = ts::coordinator::JobEvent::Kind;
    if (event.kind == Kind::started) assigned[event.job_id] = Clock::now();
    if (event.kind == Kind::done || event.kind == Kind::failed) {
      overhead_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - assigned.at(event.job_id)).count());
      if (event.kind == Kind::failed) std::fprintf(stderr, "job failed: %s\n", event.detail.c_str());
      if (static_cast<int>(overhead_ms.size()) == jobs) {
        coordinator.stop();
        agent.stop();
        io.stop();
      }
    }
  });
  // Let the agent connect first, so the first job does not wait for it.
  boost::asio::steady_timer settle(io, std::chrono::milliseconds(300));
  settle.async_wait([&](boost::system::error_code) {
    coordinator.requests().submit(
        {{"name", "overhead"}, {"axes", {{"batch_size", batch_sizes}}}, {"fixed", {{"model", "mlp"}}}}, "bench",
        "bench");
  });
  const auto start = Clock::now();
  io.run();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto summary = ts::stats::summarize(overhead_ms);
  std::printf("%zu jobs, one agent, no-op runner: %.2f s (%.0f jobs/s)\n", overhead_ms.size(), seconds,
              static_cast<double>(overhead_ms.size()) / seconds);
  std::printf("assignment to stored result: median %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n", summary.median,
              summary.p90, summary.p99, summary.max);
  return 0;
}
