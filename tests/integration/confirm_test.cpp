// `torchsweep confirm` and `torchsweep nightly` through real coordinator
// and agent processes: a
// sweep made slower than its baseline is flagged; the confirmation reruns
// either reproduce the slowdown (confirmed, exit 6) or do not (unconfirmed,
// exit 0). The fake runner's times are scaled by a file the test rewrites
// between the sweeps: the "code" got slower, then (maybe) the noise went away.
#include <gtest/gtest.h>

#include <fstream>

#include "shared/errors.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Confirm : public testing::Cluster {
 protected:
  void SetUp() override {
    start_coordinator();
    start_agent("node-0", {"--runner", "libtorch=" + fake_runner().string()});
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 15s));
  }
  void set_scale(double scale) { std::ofstream(scale_file_) << scale; }
  // One configuration, 5 runs with 2% noise: enough for the test to fire.
  void run_sweep(const std::string& name) {
    const auto file = write_file(name + ".yaml", "name: " + name +
                                                     "\ntags: [nightly]\naxes: {mode: [eager]}\n"
                                                     "fixed: {model: mlp, batch_size: 4, labels: {noise: '0.02', "
                                                     "scale_file: '" +
                                                     scale_file_.string() + "'}}\nrepeats: 5\n");
    const auto submitted = torchsweep({"submit", file.string(), "--coordinator", endpoint()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    ASSERT_TRUE(wait_for([&] { return sweep_done(name); }, 60s)) << status().dump();
  }
  bool sweep_done(const std::string& name) {
    const auto reply = status();
    if (reply.is_null()) return false;
    for (const auto& sweep : reply.at("sweeps")) {
      if (sweep.at("name") == name) return sweep.at("state") == "done";
    }
    return false;
  }
  testing::Finished confirm() {
    return torchsweep({"confirm", "tonight", "--baseline", "yesterday", "--db", db().string(), "--coordinator",
                       endpoint(), "--format", "json", "--timeout-s", "60"});
  }
  std::string classification(const testing::Finished& finished) {
    const auto rows = nlohmann::json::parse(finished.out);
    return rows.size() == 1 && rows[0].at("classification").is_string()
               ? rows[0].at("classification").get<std::string>()
               : rows.dump();
  }
  // The nightly path's sweep file: one configuration, 5 runs, scaled by the scale file; `fixed` adds fields.
  std::filesystem::path nightly_file(const std::string& fixed) {
    return write_file("nightly.yaml", "name: lab\naxes: {mode: [eager]}\nfixed: {model: mlp, batch_size: 4, " + fixed +
                                          "labels: {noise: '0.02', scale_file: '" + scale_file_.string() +
                                          "'}}\nrepeats: 5\n");
  }
  testing::Finished run_nightly(const std::filesystem::path& file, const std::filesystem::path& reports,
                                std::vector<std::string> extra = {}) {
    std::vector<std::string> arguments{"nightly",     file.string(),  "--coordinator",  endpoint(),    "--db",
                                       db().string(), "--report-dir", reports.string(), "--timeout-s", "60"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return torchsweep(arguments);
  }
  std::filesystem::path scale_file_ = directory_ / "scale";
};

TEST_F(Confirm, ARerunThatReproducesTheSlowdownConfirmsIt) {
  set_scale(1.0);
  run_sweep("yesterday");
  set_scale(1.3);
  run_sweep("tonight");
  // Before any rerun, the query's rule flags it.
  const auto query = torchsweep({"query", "--db", db().string(), "--sweep", "tonight", "--baseline", "yesterday",
                                 "--metric", "epoch_time", "--format", "json"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(nlohmann::json::parse(query.out).at(0).at("verdict"), "regressed");
  const auto confirmed = confirm();  // the reruns are as slow
  EXPECT_EQ(confirmed.exit_code, ts::exit_code::regression_confirmed) << confirmed.err;
  EXPECT_EQ(classification(confirmed), "confirmed") << confirmed.out;
  // Five confirmation jobs in the sweep, kept apart from its own five runs.
  EXPECT_EQ(store_rows("SELECT purpose, COUNT(*) FROM jobs j JOIN sweeps s USING (sweep_id) WHERE s.name = 'tonight' "
                       "GROUP BY purpose ORDER BY purpose"),
            "confirmation|5\nmeasurement|5\n");
  const auto planned = torchsweep({"query", "--db", db().string(), "--sweep", "tonight", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(planned.out).at(0).at("runs"), 5);
  // Confirmation happens once: asking again reruns nothing and says the same.
  const auto again = confirm();
  EXPECT_EQ(again.exit_code, ts::exit_code::regression_confirmed) << again.err;
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM jobs WHERE purpose = 'confirmation'"), "5\n");
}

TEST_F(Confirm, ARerunThatDoesNotReproduceItLeavesItUnconfirmed) {
  set_scale(1.0);
  run_sweep("yesterday");
  set_scale(1.3);  // a bad night: a noisy neighbour, say
  run_sweep("tonight");
  set_scale(1.0);  // gone by the time of the rerun
  const auto unconfirmed = confirm();
  EXPECT_EQ(unconfirmed.exit_code, ts::exit_code::ok) << unconfirmed.err;
  EXPECT_EQ(classification(unconfirmed), "unconfirmed") << unconfirmed.out;
}

TEST_F(Confirm, AnUnknownSweepOrConfigurationIsRefusedAndChangesNothing) {
  set_scale(1.0);
  run_sweep("yesterday");
  const auto missing = torchsweep(
      {"confirm", "no-such-sweep", "--baseline", "yesterday", "--db", db().string(), "--coordinator", endpoint()});
  EXPECT_EQ(missing.exit_code, ts::exit_code::invalid_input);
  EXPECT_NE(missing.err.find("no-such-sweep"), std::string::npos) << missing.err;
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM jobs WHERE purpose = 'confirmation'"), "0\n");
}

// The nightly path: night 1 has no baseline; night 2, slower, is flagged,
// rerun and confirmed (exit 6); night 3, as slow as night 2, is the same.
TEST_F(Confirm, TheNightlyPathJudgesEachNightAgainstThePreviousOne) {
  const auto file = nightly_file("");
  const auto reports = directory_ / "reports";
  const auto nightly = [&] { return run_nightly(file, reports); };
  set_scale(1.0);
  const auto first = nightly();
  EXPECT_EQ(first.exit_code, ts::exit_code::ok) << first.err;
  EXPECT_NE(first.out.find("no baseline"), std::string::npos) << first.out;
  EXPECT_TRUE(std::filesystem::exists(reports / "latest.html"));

  set_scale(1.3);
  const auto second = nightly();
  EXPECT_EQ(second.exit_code, ts::exit_code::regression_confirmed) << second.out << second.err;
  EXPECT_NE(second.err.find("1 confirmed"), std::string::npos) << second.err;
  // Each night tagged with the nightly tag and its date; each its own report.
  EXPECT_EQ(store_rows("SELECT COUNT(DISTINCT sweep_id) FROM sweep_tags WHERE tag = 'nightly'"), "2\n");
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM sweep_tags WHERE tag LIKE 'nightly-20__-__-__'"), "2\n");
  std::size_t pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(reports)) pages += entry.path().extension() == ".html";
  EXPECT_EQ(pages, 3u);  // two nights and latest.html

  const auto third = nightly();  // as slow as the night before: nothing new
  EXPECT_EQ(third.exit_code, ts::exit_code::ok) << third.out << third.err;
}

// nightly --explain: both nights profiled (the fake runner's profile puts what the scale added into
// fake::slow_path), so the confirmed regression is explained from the nights' own runs: the slow path first,
// added, the operators reconciled with the measured difference; the report's Why section has it too.
TEST_F(Confirm, TheNightlyPathExplainsTheRegressionItConfirms) {
  const auto file = nightly_file("profile: {steps: 2}, ");
  const auto reports = directory_ / "reports";
  const auto nightly = [&] { return run_nightly(file, reports, {"--explain"}); };
  set_scale(1.0);
  ASSERT_EQ(nightly().exit_code, ts::exit_code::ok);
  set_scale(1.3);
  const auto second = nightly();
  EXPECT_EQ(second.exit_code, ts::exit_code::regression_confirmed) << second.out << second.err;
  const auto why = second.out.find("Why mlp");
  ASSERT_NE(why, std::string::npos) << second.out;
  const auto explained = second.out.substr(why);
  EXPECT_NE(explained.find("fake::slow_path  added"), std::string::npos) << explained;
  EXPECT_LT(explained.find("fake::slow_path"), explained.find("fake::work")) << explained;
  EXPECT_NE(explained.find(" within the bound "), std::string::npos) << explained;
  const auto page = testing::slurp(reports / "latest.html");
  EXPECT_NE(page.find(R"("kind":"confirmed regression")"), std::string::npos);
}

// explain --coordinator: neither mode of a sweep has a profile, so explain has the coordinator's agent profile
// each side once (the fake runner gives a job with a profile one), then explains from the store it wrote.
TEST_F(Confirm, ExplainProfilesASideWithoutOneOnTheCoordinatorsAgents) {
  const auto file = write_file("modes.yaml",
                               "name: modes\naxes: {mode: [eager, compiled]}\n"
                               "fixed: {model: mlp, batch_size: 4}\nrepeats: 5\n");
  ASSERT_EQ(torchsweep({"submit", file.string(), "--coordinator", endpoint()}).exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return sweep_done("modes"); }, 60s)) << status().dump();
  const auto explained = torchsweep({"explain", "mode=eager", "mode=compiled", "--db", db().string(), "--coordinator",
                                     endpoint(), "--timeout-s", "60", "--format", "json"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  std::size_t profiled = 0;
  for (auto at = explained.err.find("profiling it"); at != std::string::npos;
       at = explained.err.find("profiling it", at + 1)) {
    ++profiled;
  }
  EXPECT_EQ(profiled, 2u) << explained.err;
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM sweeps WHERE name = 'explain-profile'"), "2\n");
  const auto explanation = nlohmann::json::parse(explained.out);
  // The fake runner's compiled steps take half an eager step, all of it fake::work.
  const auto& top = explanation.at("operators").at(0);
  EXPECT_EQ(top.at("name"), "fake::work");
  EXPECT_NEAR(top.at("seconds").at(1).get<double>() / top.at("seconds").at(0).get<double>(), 0.5, 0.05);
  EXPECT_LT(explanation.at("timed").at("difference_s").get<double>(), 0);
  const auto again = torchsweep({"explain", "mode=eager", "mode=compiled", "--db", db().string(), "--no-profile"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

}  // namespace
}  // namespace ts
