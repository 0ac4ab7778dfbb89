#include "readers/regressions.hpp"

#include <gtest/gtest.h>

#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

using simulation::all_judged;
using simulation::make_result;
using simulation::SyntheticResult;

// A baseline sweep and a judged one of the same configurations; runs of a
// given purpose are added with chosen epoch times.
class Regressions : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.add_sweep({"base", "base", nlohmann::json::object(), {}, "test", 0, "2026-11-28T00:00:00.000Z"}, {});
    store_.add_sweep({"now", "now", nlohmann::json::object(), {}, "test", 0, "2026-11-29T00:00:00.000Z"}, {});
  }
  void add_runs(const std::string& sweep, const std::string& model, int runs, double seconds,
                const std::string& purpose = "measurement") {
    std::vector<store::JobRecord> jobs;
    std::vector<nlohmann::json> results;
    for (int run = 0; run < runs; ++run) {
      const auto job_id = sweep + "/" + std::to_string(next_++);
      jobs.push_back({job_id, next_, model, run, "libtorch", 1, {}, 3, purpose});
      SyntheticResult r;
      r.job_id = job_id;
      r.model = model;
      const double t = seconds * (1.0 + 0.005 * run);
      r.epoch_seconds = {t, t, t};
      results.push_back(make_result(r));
    }
    store_.add_jobs(sweep, jobs);
    store_.ingest_results(all_judged(results), "agent");
  }
  // model -> classification ("" for none)
  std::map<std::string, std::string> classified() {
    const auto table = regressions(store_.database(), {{{"now"}, {}, "", "", {}, false}, "base", {}});
    std::map<std::string, std::string> out;
    for (const auto& row : table.rows) {
      const auto& value = row[column_of(table, "classification")];
      out[row[column_of(table, "model")].get<std::string>()] = value.is_null() ? "" : value.get<std::string>();
    }
    return out;
  }
  store::Store store_{":memory:"};
  int next_ = 0;
};

TEST_F(Regressions, FlaggedThenConfirmedOrUnconfirmedByTheReruns) {
  for (const std::string model : {"mlp", "resnet18", "resnet50"}) {
    add_runs("base", model, 5, 1.0);
    add_runs("now", model, 5, 1.3);
  }
  EXPECT_EQ(classified(),
            (std::map<std::string, std::string>{{"mlp", "flagged"}, {"resnet18", "flagged"}, {"resnet50", "flagged"}}));
  add_runs("now", "mlp", 5, 1.3, "confirmation");       // the reruns are as slow
  add_runs("now", "resnet18", 5, 1.0, "confirmation");  // the reruns are not
  EXPECT_EQ(classified(), (std::map<std::string, std::string>{
                              {"mlp", "confirmed"}, {"resnet18", "unconfirmed"}, {"resnet50", "flagged"}}));
  // The reruns stay out of the sweep's own figures.
  QueryOptions options;
  options.filter.sweeps = {"now"};
  options.filter.where = {{"model", "resnet18"}};
  const auto table = query(store_.database(), options);
  EXPECT_EQ(table.rows.at(0)[column_of(table, "runs")], 5);
  options.filter.purpose = "any";
  EXPECT_EQ(query(store_.database(), options).rows.at(0)[column_of(table, "runs")], 10);
}

TEST_F(Regressions, TooFewRunsForTheTestAreSuspiciousNotSame) {
  add_runs("base", "mlp", 3, 1.0);
  add_runs("now", "mlp", 3, 1.3);  // 30% slower, but 3 against 3 cannot reach p < 0.01
  add_runs("base", "resnet18", 3, 1.0);
  add_runs("now", "resnet18", 3, 1.01);  // within the threshold: nothing to say
  EXPECT_EQ(classified(), (std::map<std::string, std::string>{{"mlp", "suspicious"}, {"resnet18", ""}}));
}

}  // namespace
}  // namespace ts::readers
