#pragma once
// The store the query tests read (tests/readers/query_test.cpp,
// compare_test.cpp): synthetic nights of results and the helpers that find
// a table's columns and rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "readers/query.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace ts::readers::query_fixture {

using namespace store;  // the records the fixture writes

using ts::simulation::all_judged;
using ts::simulation::make_result;
using ts::simulation::SyntheticResult;

// Two nightly sweeps of the same matrix (mlp, resnet50) x (eager, compiled),
// six runs each; in the second night resnet50 compiled is 20% slower.
class QueryStore : public ::testing::Test {
 protected:
  void SetUp() override {
    add_night("night-1", "2026-11-28T00:00:00.000Z", 1.0);
    add_night("night-2", "2026-11-29T00:00:00.000Z", 1.2);
  }

  void add_night(const std::string& sweep_id, const std::string& created_at, double resnet_compiled_factor,
                 int runs = 6) {
    std::vector<JobRecord> jobs;
    std::vector<nlohmann::json> results;
    int ordinal = 0;
    for (const std::string model : {"mlp", "resnet50"}) {
      for (const std::string mode : {"eager", "compiled"}) {
        for (int run = 0; run < runs; ++run) {
          const auto job_id = sweep_id + "/" + std::to_string(ordinal);
          jobs.push_back({job_id, ordinal++, model + mode, run, "libtorch", 1, {}, 3});
          // eager 2.0 s (mlp 1.0 s); compiled 1.6 s (0.5 s); each run a little apart.
          double base = model == "mlp" ? (mode == "eager" ? 1.0 : 0.5) : (mode == "eager" ? 2.0 : 1.6);
          if (model == "resnet50" && mode == "compiled") base *= resnet_compiled_factor;
          const double t = base * (1.0 + 0.01 * run);
          SyntheticResult r;
          r.job_id = job_id;
          r.sweep = "ignored-name";
          r.model = model;
          r.mode = mode;
          r.epoch_seconds = {t, t, t};
          r.peak_bytes = (mode == "eager" ? 1000 : 800) * int64_t{1 << 20};
          results.push_back(make_result(r));
        }
      }
    }
    store_.add_sweep({sweep_id, "nightly", nlohmann::json::object(), {"nightly"}, "test", 0, created_at}, jobs);
    store_.ingest_results(all_judged(results), "agent");
  }

  Table run(QueryOptions options) { return query(store_.database(), options); }
  static std::size_t column(const Table& table, const std::string& name) {
    const auto found = std::find(table.columns.begin(), table.columns.end(), name);
    EXPECT_NE(found, table.columns.end()) << name;
    return static_cast<std::size_t>(found - table.columns.begin());
  }
  // The row whose `key` column equals each given value.
  static std::vector<nlohmann::json> row(const Table& table,
                                         const std::vector<std::pair<std::string, nlohmann::json>>& match) {
    for (const auto& candidate : table.rows) {
      if (std::all_of(match.begin(), match.end(),
                      [&](const auto& m) { return candidate[column(table, m.first)] == m.second; }))
        return candidate;
    }
    throw std::runtime_error("no matching row");
  }

  Store store_{":memory:"};
};

}  // namespace ts::readers::query_fixture
