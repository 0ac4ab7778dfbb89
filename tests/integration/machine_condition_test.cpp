// The node's condition through real coordinator and agent processes
// (docs/noise.md): a test that loads every CPU while a job runs finds the
// stored result flagged busy, with the reason, and a job that requires a
// quiet machine is retried and never stored while the load lasts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

// Spins on every CPU until destroyed: this test's own process is the
// "other process" the agent has to see.
class CpuLoad {
 public:
  CpuLoad() {
    for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i)
      threads_.emplace_back([this] {
        volatile unsigned long spins = 0;
        while (!stop_.load(std::memory_order_relaxed)) spins = spins + 1;
      });
  }
  ~CpuLoad() {
    stop_ = true;
    for (auto& thread : threads_) thread.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

class MachineCondition : public testing::Cluster {
 protected:
  void SetUp() override {
    Cluster::SetUp();
    start_coordinator();
    start_agent("node", {"--runner", "libtorch=" + fake_runner().string()});
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  }
  void submit(const std::string& name, bool require_quiet) {
    // 2 s: long enough for the agent to judge the window (1 s), short enough for a test.
    const auto file = write_file(name + ".yaml", "name: " + name +
                                                     "\naxes: {batch_size: [8]}\nfixed: {model: mlp, labels: {sleep: "
                                                     "\"2\"}, require_quiet_machine: " +
                                                     (require_quiet ? "true" : "false") + "}\nmax_attempts: 2\n");
    const auto submitted = torchsweep({"submit", file.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
};

TEST_F(MachineCondition, ALoadedCpuDuringAJobFlagsItsResultBusyWithTheReason) {
  {
    const CpuLoad load;
    submit("loaded", /*require_quiet=*/false);
    ASSERT_TRUE(wait_for([&] { return jobs_in("done") == 1; }, 60s)) << status().dump();
  }
  EXPECT_EQ(store_rows("SELECT machine_busy FROM results"), "1\n");
  const auto machine =
      nlohmann::json::parse(store_rows("SELECT json_extract(document, '$.context.condition') FROM result_documents"));
  EXPECT_TRUE(machine.at("judged").get<bool>()) << machine.dump();
  EXPECT_GT(machine.at("other_cpu_share").get<double>(), 0.5) << machine.dump();
  ASSERT_FALSE(machine.at("busy_reasons").empty()) << machine.dump();
  EXPECT_TRUE(machine.at("busy_reasons").at(0).get<std::string>().starts_with("other processes used "))
      << machine.dump();
  // The query shows it: the busy column, and the condition axis to leave such runs out.
  const auto query = torchsweep({"query", "--db", db().string(), "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(nlohmann::json::parse(query.out).at(0).at("busy"), 1) << query.out;
  const auto quiet = torchsweep({"query", "--db", db().string(), "--where", "condition=quiet", "--format", "json"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(nlohmann::json::parse(quiet.out), nlohmann::json::array()) << quiet.out;
}

TEST_F(MachineCondition, AJobRequiringAQuietMachineIsRetriedAndNeverStoredWhileTheNodeIsBusy) {
  const CpuLoad load;
  submit("quiet-only", /*require_quiet=*/true);
  ASSERT_TRUE(wait_for([&] { return jobs_in("failed") == 1; }, 60s)) << status().dump();
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM results"), "0\n");
  const auto job = store_rows("SELECT attempts, last_error FROM jobs");
  EXPECT_EQ(job.substr(0, 2), "2|") << job;
  EXPECT_NE(job.find("the node was busy during the run and the job asks require_quiet_machine: other processes used "),
            std::string::npos)
      << job;
}

}  // namespace
}  // namespace ts
