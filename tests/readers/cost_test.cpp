// What priced results cost, read back: the query's cost metrics and the
// report's configurations and summary (docs/methodology.md).
#include <gtest/gtest.h>

#include "agent/judge/judge.hpp"
#include "readers/query.hpp"
#include "readers/report.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

using simulation::make_result;

TEST(Costs, TheQueryAndTheReportShowWhatThePricedRunsCost) {
  store::Store store(":memory:");
  std::vector<store::JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int run = 0; run < 3; ++run) {
    const auto job_id = "priced/" + std::to_string(run);
    jobs.push_back({job_id, run, "k", run, "libtorch", 1, {}, 3});
    // 64 samples x 10 steps in 1 s: 640 samples/s; the agent timed each run at 10 s.
    auto result = make_result({.job_id = job_id, .sweep = "priced", .epoch_seconds = {1.0, 1.0, 1.0}});
    agent::judge(result, {nullptr, {}, {{"Test CPU", 3.6}}, 10.0});
    results.push_back(result);
  }
  store.add_sweep({"priced", "priced", nlohmann::json::object(), {}, "test", 0, "2026-12-06T00:00:00.000Z"}, jobs);
  store.ingest_results(results, "agent");

  QueryOptions options;
  options.filter.sweeps = {"priced"};
  options.metrics = {"cost_per_million_samples", "run_cost"};
  const auto rows = row_objects(query(store.database(), options));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].at("cost_per_million_samples").get<double>(), 3.6 / 3600 / 640 * 1e6, 1e-9) << rows[0];
  EXPECT_NEAR(rows[0].at("run_cost").get<double>(), 0.01, 1e-12) << rows[0];

  ReportOptions report;
  report.filter.sweeps = {"priced"};
  const auto data = report_data(store.database(), report);
  EXPECT_NEAR(data.at("summary").at("cost").get<double>(), 3 * 0.01, 1e-12) << data.at("summary");
  const auto& configuration = data.at("configurations").at("rows").at(0);
  EXPECT_NEAR(configuration.at("cost_per_million_samples").get<double>(), 3.6 / 3600 / 640 * 1e6, 1e-9);
}

}  // namespace
}  // namespace ts::readers
