// torchsweep bisect through real coordinator and agent processes
// (docs/bisect.md): a regression planted at one commit of a git repository
// the test makes is found at that commit, from the model code the agent
// exports at each commit; one planted at one environment of several
// local interpreters (each reporting a PyTorch version) is found there,
// and a noisy step in the middle stops the search as inconclusive; a
// coordinator restarted mid-bisect resumes it, and running the bisection
// again reads every step back instead of measuring it twice; a nightly
// regression after an environment's upgrade is bisected by nightly --bisect.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>

#include "shared/errors.hpp"
#include "store/sqlite.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

class Bisect : public testing::Cluster {
 protected:
  // A repository whose model code is 1.5 times slower from commit `first_bad` on (of `count`); its commits, oldest
  // first.
  std::vector<std::string> make_repository(int count, int first_bad) {
    const auto models = repo_ / "models/team";
    std::filesystem::create_directories(models);
    git("init -q . && git config user.email t@example.invalid && git config user.name t");
    std::vector<std::string> commits;
    for (int i = 0; i < count; ++i) {
      std::ofstream(models / "ranker.py") << "SCALE = " << (i >= first_bad ? "1.5" : "1.0") << "\n# commit " << i
                                          << "\n";
      git("add -A && git commit -q -m 'commit " + std::to_string(i) + "'");
      EXPECT_EQ(std::system(("git -C '" + repo_.string() + "' rev-parse HEAD > '" + (directory_ / "head").string() +
                             "'").c_str()), 0);
      std::string sha;
      std::ifstream(directory_ / "head") >> sha;
      commits.push_back(sha);
    }
    return commits;
  }
  void git(const std::string& command) {
    ASSERT_EQ(std::system(("cd '" + repo_.string() + "' && git " + command + " >/dev/null").c_str()), 0) << command;
  }
  void start_node(std::vector<std::string> extra) {
    std::filesystem::create_directories(repo_ / "models");
    // Named torch-compile: the runner a python: model runs on (schemas/model_libraries.json).
    extra.insert(extra.end(), {"--runner", "torch-compile=" + fake_runner().string(), "--model-path",
                               (repo_ / "models").string()});
    start_agent("node-0", extra);
    ASSERT_TRUE(wait_for([&] { return agent_names().size() == 1; }, 20s));
  }
  std::vector<std::string> commit_bisection(const std::vector<std::string>& commits) {
    return {"bisect",
            "runner=torch-compile",
            "model=python:team.ranker:build",
            "batch_size=4",
            R"(labels={"noise": "0.02", "scale_from_model": "team/ranker.py"})",
            "--repo",
            repo_.string(),
            "--good",
            commits.front(),
            "--bad",
            commits.back(),
            "--db",
            db().string(),
            "--coordinator",
            endpoint(),
            "--timeout-s",
            "120",
            "--format",
            "json"};
  }
  int64_t bisection_sweeps() {
    return std::stoll(store_rows("SELECT COUNT(*) FROM sweep_tags WHERE tag = 'bisect'"));
  }
  // An interpreter that reports PyTorch `version` to the fake runner and scales its times by `scale`.
  std::filesystem::path interpreter(const std::string& name, const std::string& version, const std::string& scale) {
    const auto path = write_file("python-" + name, "#!/bin/sh\nTS_FAKE_TORCH=" + version + " TS_FAKE_SCALE=" + scale +
                                                       " TS_FAKE_COUNTER=" + (directory_ / ("count-" + name)).string() +
                                                       " exec python3 \"$@\"\n");
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  std::filesystem::path repo_ = directory_ / "repo";
};

TEST_F(Bisect, APlantedRegressionAmongTheCommitsOfTheModelsCodeIsFoundAtItsCommit) {
  start_coordinator();
  start_node({});
  const auto commits = make_repository(7, 3);
  const auto found = torchsweep(commit_bisection(commits));
  ASSERT_EQ(found.exit_code, 0) << found.out << found.err;
  const auto answer = nlohmann::json::parse(found.out);
  EXPECT_EQ(answer.at("result"), "first_bad");
  EXPECT_EQ(answer.at("step"), commits[3]);
  EXPECT_EQ(answer.at("last_good"), commits[2]);
  EXPECT_EQ(answer.at("steps"), commits);
  // The bad side, then commits 3, 1 and 2: each against commit 0, with its ratio and interval.
  const auto& evidence = answer.at("evidence");
  ASSERT_EQ(evidence.size(), 4u) << evidence.dump(1);
  for (const auto& row : evidence) {
    const bool bad = row.at("model_commit") == commits[3] || row.at("model_commit") == commits[6];
    EXPECT_EQ(row.at("verdict"), bad ? "bad" : "good") << row.dump();
    EXPECT_NEAR(row.at("ratio").get<double>(), bad ? 1.5 : 1.0, 0.05) << row.dump();
    EXPECT_GE(row.at("runs").get<int64_t>(), 5);
    EXPECT_LE(row.at("ratio_low").get<double>(), row.at("ratio").get<double>());
    EXPECT_GE(row.at("ratio_high").get<double>(), row.at("ratio").get<double>());
  }
  // Every run names the full commit it ran, and the commits never pool in a query.
  const auto compared =
      torchsweep({"query", "--db", db().string(), "--tag", answer.at("bisection"), "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_EQ(nlohmann::json::parse(compared.out).size(), 5u) << compared.out;

  // Bad input changes nothing: a good side that is not an ancestor, a name that is no commit.
  auto reversed = commit_bisection({commits.back(), commits.front()});
  const auto refused = torchsweep(reversed);
  EXPECT_EQ(refused.exit_code, exit_code::invalid_input);
  EXPECT_NE(refused.err.find("--good: '" + commits.back() + "' is not an ancestor"), std::string::npos) << refused.err;
  const auto unknown = torchsweep(commit_bisection({"v9.9", commits.back()}));
  EXPECT_EQ(unknown.exit_code, exit_code::invalid_input);
  EXPECT_NE(unknown.err.find("--good: 'v9.9' is no commit"), std::string::npos) << unknown.err;
  EXPECT_EQ(bisection_sweeps(), 4);
}

TEST_F(Bisect, ACoordinatorRestartedMidBisectResumesItAndARerunMeasuresNothingTwice) {
  start_coordinator();
  start_node({});
  const auto commits = make_repository(9, 6);
  auto arguments = commit_bisection(commits);
  arguments.insert(arguments.begin(), TS_TORCHSWEEP_BINARY);
  simulation::ChildProcess bisection(arguments, directory_ / "bisect.log");
  // Once the bad side's step is done, the coordinator dies mid-bisection and comes back on its port and store.
  ASSERT_TRUE(wait_for([&] { return bisection_sweeps() >= 2; }, 60s));
  coordinator_->signal(SIGKILL);
  coordinator_->wait_exit(10s);
  const int port = port_;
  start_coordinator(port);
  const auto code = bisection.wait_exit(120s);
  ASSERT_TRUE(code) << "the bisection did not end";
  const auto log = testing::slurp(directory_ / "bisect.log");
  EXPECT_EQ(*code, 0) << log;
  const auto answer = nlohmann::json::parse(log.substr(log.find("{\n")));
  EXPECT_EQ(answer.at("step"), commits[6]);
  const auto measured = bisection_sweeps();
  EXPECT_EQ(measured, static_cast<int64_t>(answer.at("evidence").size()));

  // Again, with nothing changed: every step is read back from the store, nothing is submitted.
  const auto again = torchsweep(commit_bisection(commits));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("step"), commits[6]);
  EXPECT_EQ(nlohmann::json::parse(again.out).at("evidence"), answer.at("evidence"));
  EXPECT_EQ(bisection_sweeps(), measured);
  EXPECT_NE(again.err.find("measured by sweep"), std::string::npos) << again.err;
}

TEST_F(Bisect, OverEnvironmentsInVersionOrderTheFirstSlowOneIsFoundAndANoisyStepIsInconclusive) {
  start_coordinator();
  // Seven local interpreters, named out of version order: 2.9 and later are 1.4 times slower, and 2.7.5's runs
  // are 0.7 and 1.6 times as long in turn.
  std::vector<std::string> extra{"--python-runner", "fake=" + fake_runner().string()};
  const std::vector<std::tuple<std::string, std::string, std::string>> environments{
      {"old", "2.6.0", "1.0"}, {"b", "2.7.1", "1.0"},  {"noisy", "2.7.5", "alternate"}, {"a", "2.8.0", "1.0"},
      {"c", "2.9.0", "1.4"},   {"d", "2.10.0", "1.4"}, {"new", "2.11.0+cpu", "1.4"}};
  for (const auto& [name, version, scale] : environments) {
    extra.insert(extra.end(), {"--env", name + "=" + interpreter(name, version, scale).string()});
  }
  start_node(extra);
  const auto bisect = [&](const std::string& good, const std::string& bad, std::vector<std::string> more = {}) {
    std::vector<std::string> arguments{
        "bisect",      "runner=fake",   "model=mlp", "batch_size=4", R"(labels={"noise": "0.02"})",
        "--good",      "env=" + good,   "--bad",     "env=" + bad,   "--db",
        db().string(), "--coordinator", endpoint(),  "--max-runs",   "8",
        "--timeout-s", "120",           "--format",  "json"};
    arguments.insert(arguments.end(), more.begin(), more.end());
    return torchsweep(arguments);
  };
  const auto why_sweeps = [&] { return store_rows("SELECT COUNT(*) FROM sweep_tags WHERE tag = 'bisect-why'"); };
  // The steps in version order (2.10 after 2.9); new, then a (good) and c (bad): noisy is never needed.
  const auto found = bisect("old", "new", {"--explain"});
  ASSERT_EQ(found.exit_code, 0) << found.out << found.err;
  const auto first = nlohmann::json::parse(found.out);
  EXPECT_EQ(first.at("steps"), (std::vector<std::string>{"old", "b", "noisy", "a", "c", "d", "new"}));
  EXPECT_EQ(first.at("step"), "c");
  EXPECT_EQ(first.at("last_good"), "a");
  EXPECT_EQ(first.at("evidence").size(), 3u) << first.dump(1);
  // --explain: a and c profiled in one paired sweep of their own, 5 runs a side, and c's planted 1.4 named: the
  // slow path c added is 0.4/1.4 of its step, and the operators account for the measured difference.
  ASSERT_TRUE(first.contains("explanation")) << first.dump(1) << found.err;
  const auto& explanation = first.at("explanation");
  EXPECT_EQ(why_sweeps(), "1\n");
  for (std::size_t side = 0; side < 2; ++side) {
    const auto& resolved = explanation.at("sides").at(side);
    EXPECT_EQ(resolved.at("configuration").at("env"), side == 0 ? "a" : "c") << resolved.dump();
    EXPECT_EQ(resolved.at("runs"), 5) << resolved.dump();
    EXPECT_EQ(resolved.at("profiled_runs"), 5) << resolved.dump();
  }
  // One sweep: "sweep=ID,env=a" and "sweep=ID,env=c".
  const auto sweep_of = [&](std::size_t side) {
    const auto spec = explanation.at("sides").at(side).at("spec").get<std::string>();
    return spec.substr(0, spec.find(','));
  };
  EXPECT_EQ(sweep_of(0), sweep_of(1));
  const auto& top = explanation.at("operators").at(0);
  EXPECT_EQ(top.at("name"), "fake::slow_path") << explanation.at("operators").dump();
  EXPECT_EQ(top.at("change"), "added");
  const auto& reconciliation = explanation.at("reconciliation");
  EXPECT_NEAR(reconciliation.at("measured_s").get<double>() / explanation.at("timed").at("step_s").at(0).get<double>(),
              0.4, 0.06)
      << reconciliation.dump();
  EXPECT_TRUE(reconciliation.at("within_bound").get<bool>()) << reconciliation.dump();
  // Run again, the pair's sweep is read back: nothing is profiled twice.
  const auto again = bisect("old", "new", {"--explain"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("explanation").at("operators"), explanation.at("operators"));
  EXPECT_EQ(why_sweeps(), "1\n");
  EXPECT_NE(again.err.find("profiled in pairs by sweep"), std::string::npos) << again.err;

  // From b to c the first middle is the noisy one: the search stops there, after every run it was allowed.
  const auto stuck = bisect("b", "c");
  ASSERT_EQ(stuck.exit_code, exit_code::inconclusive) << stuck.out << stuck.err;
  const auto answer = nlohmann::json::parse(stuck.out);
  EXPECT_EQ(answer.at("result"), "inconclusive");
  EXPECT_EQ(answer.at("step"), "noisy");
  EXPECT_NE(answer.at("conclusion").get<std::string>().find("straddles"), std::string::npos) << answer.dump(1);
  for (const auto& row : answer.at("evidence")) {
    if (row.at("env") != "noisy") continue;
    EXPECT_EQ(row.at("runs"), 8) << row.dump();
    EXPECT_LT(row.at("ratio_low").get<double>(), 1.05) << row.dump();
    EXPECT_GT(row.at("ratio_high").get<double>(), 1.05) << row.dump();
  }

  // A bad side that is not slower, and an environment no agent offers: said, and nothing to bisect.
  const auto not_slower = bisect("old", "a");
  EXPECT_EQ(not_slower.exit_code, exit_code::invalid_input) << not_slower.out << not_slower.err;
  EXPECT_EQ(nlohmann::json::parse(not_slower.out).at("result"), "not_regressed");
  const auto unknown = bisect("old", "torch-0.1");
  EXPECT_EQ(unknown.exit_code, exit_code::invalid_input);
  EXPECT_NE(unknown.err.find("--bad: env=torch-0.1: no agent"), std::string::npos) << unknown.err;
}

// The nightly path (docs/bisect.md): an environment upgraded in place between two nights (the same name, PyTorch
// 2.6.0 then 2.9.0, 1.4 times slower) makes a regression the night confirms; --bisect finds the first slow version
// among the environments the agent offers between the two. The next night's baseline version is offered by no agent
// any more: said, with the commands that would make and bisect it.
TEST_F(Bisect, ANightlyRegressionAfterAnInPlaceUpgradeIsBisectedOverTheOfferedEnvironments) {
  start_coordinator();
  const std::vector<std::tuple<std::string, std::string, std::string>> offered{
      {"v26", "2.6.0", "1.0"}, {"v27", "2.7.1", "1.0"}, {"v28", "2.8.0", "1.4"}, {"v29", "2.9.0", "1.4"}};
  const auto start_night = [&](const std::string& version, const std::string& scale, std::size_t environments) {
    if (!agents_.empty()) {
      agents_.back()->signal(SIGTERM);
      ASSERT_TRUE(agents_.back()->wait_exit(20s));
      ASSERT_TRUE(wait_for([&] { return agent_names().empty(); }, 20s));
    }
    std::vector<std::string> extra{"--python-runner", "fake=" + fake_runner().string(), "--env",
                                   "nightly=" + interpreter("nightly-" + version, version, scale).string()};
    for (std::size_t i = 0; i < environments; ++i) {
      const auto& [name, at, times] = offered[i];
      extra.insert(extra.end(), {"--env", name + "=" + interpreter(name, at, times).string()});
    }
    start_node(extra);
  };
  const auto sweep = write_file("night.yaml",
                                "name: night\naxes:\n  batch_size: [4]\nfixed: {runner: fake, model: mlp, "
                                "env: nightly, labels: {noise: '0.02'}}\nrepeats: 5\n");
  const auto night = [&] {
    return torchsweep({"nightly", sweep.string(), "--bisect", "--db", db().string(), "--coordinator", endpoint(),
                       "--report-dir", (directory_ / "reports").string(), "--timeout-s", "120"});
  };
  start_night("2.6.0", "1.0", offered.size());
  const auto first = night();
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  start_night("2.9.0", "1.4", offered.size());
  const auto upgraded = night();
  ASSERT_EQ(upgraded.exit_code, exit_code::regression_confirmed) << upgraded.out << upgraded.err;
  EXPECT_NE(upgraded.out.find("Which upgrade made"), std::string::npos) << upgraded.out;
  EXPECT_NE(upgraded.out.find("PyTorch 2.6.0 (env=v26) to 2.9.0 (env=nightly)"), std::string::npos) << upgraded.out;
  EXPECT_NE(upgraded.out.find("first bad: env=v28 (last good: v27)"), std::string::npos) << upgraded.out;
  EXPECT_GE(bisection_sweeps(), 3);

  // The night recorded its regression with an id: query --regressions lists it, and `bisect ID` takes its
  // configuration and both sides from it (bad the night's environment, good the one offering the baseline's
  // 2.6.0), so it is the nightly's own bisection, read back step by step, nothing measured again.
  const auto recorded = [&] {
    const auto listed = torchsweep({"query", "--regressions", "--db", db().string(), "--format", "json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    return nlohmann::json::parse(listed.out);
  };
  const auto regressions = recorded();
  ASSERT_EQ(regressions.size(), 1u) << regressions.dump(1);
  const auto& regression = regressions.at(0);
  const auto id = regression.at("regression").get<std::string>();
  EXPECT_NE(upgraded.out.find(id + "  confirmed"), std::string::npos) << upgraded.out;
  EXPECT_EQ(regression.at("classification"), "confirmed");
  EXPECT_EQ(regression.at("torch_before"), "2.6.0");
  EXPECT_EQ(regression.at("torch_after"), "2.9.0");
  EXPECT_NEAR(regression.at("change").get<double>(), 0.4, 0.08) << regression.dump();
  const auto sweeps_before = bisection_sweeps();
  const auto by_id = torchsweep(
      {"bisect", id, "--db", db().string(), "--coordinator", endpoint(), "--timeout-s", "120", "--format", "json"});
  ASSERT_EQ(by_id.exit_code, 0) << by_id.out << by_id.err;
  const auto answer = nlohmann::json::parse(by_id.out);
  EXPECT_EQ(answer.at("step"), "v28");
  EXPECT_EQ(answer.at("last_good"), "v27");
  EXPECT_EQ(answer.at("steps"), (std::vector<std::string>{"v26", "v27", "v28", "nightly"}));  // v29 is 2.9.0 too
  EXPECT_EQ(bisection_sweeps(), sweeps_before);
  EXPECT_NE(by_id.err.find("measured by sweep"), std::string::npos) << by_id.err;
  const auto no_such = torchsweep({"bisect", "r-0123456789ab", "--db", db().string(), "--coordinator", endpoint()});
  EXPECT_EQ(no_such.exit_code, exit_code::invalid_input);
  EXPECT_NE(no_such.err.find("no stored regression 'r-0123456789ab'"), std::string::npos) << no_such.err;

  // v29 is gone: no agent offers the baseline night's 2.9.0.
  start_night("2.10.0", "2.0", 3);
  const auto unoffered = night();
  ASSERT_EQ(unoffered.exit_code, exit_code::regression_confirmed) << unoffered.out << unoffered.err;
  EXPECT_NE(unoffered.out.find("not bisected: PyTorch 2.9.0 (the baseline night's; this night ran 2.10.0 in nightly) "
                               "is offered by no agent with runner fake"),
            std::string::npos)
      << unoffered.out;
  EXPECT_NE(unoffered.out.find("torchsweep-make-environment make torch-2.9.0 --pin torch==2.9.0"), std::string::npos)
      << unoffered.out;
  EXPECT_NE(unoffered.out.find("--good env=torch-2.9.0 --bad env=nightly"), std::string::npos) << unoffered.out;
  // Its id says the same: no good side to take.
  const auto newest = recorded();
  ASSERT_EQ(newest.size(), 2u) << newest.dump(1);
  const auto refused = torchsweep(
      {"bisect", newest.at(0).at("regression").get<std::string>(), "--db", db().string(), "--coordinator", endpoint()});
  EXPECT_EQ(refused.exit_code, exit_code::invalid_input) << refused.out;
  EXPECT_NE(refused.err.find("no agent offers PyTorch 2.9.0 (the baseline night's) with runner fake"),
            std::string::npos)
      << refused.err;
}

// Fake torch wheels (py3-none-any): torch/__init__.py with the version and a SLOWDOWN the fake runner applies.
constexpr const char* fake_wheels = R"(import pathlib, sys, zipfile
for spec in sys.argv[2:]:
    version, slowdown = spec.split("=")
    info = f"torch-{version}.dist-info"
    files = {"torch/__init__.py": f'__version__ = "{version}"\nSLOWDOWN = {slowdown}\n',
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(pathlib.Path(sys.argv[1]) / f"torch-{version}-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
)";

TEST_F(Bisect, ReleasedVersionsNoEnvironmentOffersAreMadeWhenAStepNeedsThemAndOnlyThen) {
  // A folder of wheels stands in for the package index: torch 2.6 to 2.10, 2.8 and later 1.4 times slower, and a
  // pre-release that is no step.
  const auto wheels = directory_ / "index", made = directory_ / "environments", cache = directory_ / "wheels";
  std::filesystem::create_directories(wheels);
  const auto builder = write_file("fake_wheels.py", fake_wheels);
  ASSERT_EQ(std::system(("python3 '" + builder.string() + "' '" + wheels.string() +
                         "' 2.6.0=1.0 2.7.0=1.0 2.8.0=1.4 2.9.0=1.4 2.10.0=1.4 2.9.0rc1=1.0")
                            .c_str()),
            0);
  const auto tool = std::filesystem::path(TS_TORCHSWEEP_BINARY).parent_path() / "torchsweep-make-environment";
  const auto make = [&](const std::string& version) {
    return testing::run_program({tool.string(), "make", "torch-" + version, "--pin", "torch==" + version, "--with", "",
                                 "--root", made.string(), "--wheels", cache.string(), "--find-links",
                                 wheels.string()});
  };
  // The two sides, made by the tool as a user would.
  std::vector<std::string> sides;
  for (const auto& version : {"2.6.0", "2.10.0"}) {
    const auto side = make(version);
    ASSERT_EQ(side.exit_code, 0) << side.err;
    EXPECT_EQ(side.out, (made / ("torch-" + std::string(version)) / "bin/python3").string() + "\n");
    sides.push_back(side.out.substr(0, side.out.size() - 1));
  }
  const auto bisect = [&] {
    return testing::run_program({"env",
                                 "XDG_CACHE_HOME=" + (directory_ / "cache").string(),
                                 TS_TORCHSWEEP_BINARY,
                                 "bisect",
                                 "runner=fake",
                                 "model=mlp",
                                 "batch_size=4",
                                 R"(labels={"noise": "0.02"})",
                                 "--good",
                                 "env=torch-2.6.0",
                                 "--bad",
                                 "env=torch-2.10.0",
                                 "--make-environments",
                                 "--environments-dir",
                                 made.string(),
                                 "--wheels-dir",
                                 cache.string(),
                                 "--find-links",
                                 wheels.string(),
                                 "--no-companions",
                                 "--python-runner",
                                 "fake=" + fake_runner().string(),
                                 "--env",
                                 "torch-2.6.0=" + sides[0],
                                 "--env",
                                 "torch-2.10.0=" + sides[1],
                                 "--no-default-runners",
                                 "--peak-probe",
                                 "off",
                                 "--db",
                                 db().string(),
                                 "--max-runs",
                                 "8",
                                 "--timeout-s",
                                 "120",
                                 "--format",
                                 "json"});
  };
  const auto bisection = bisect();
  ASSERT_EQ(bisection.exit_code, 0) << bisection.out << bisection.err;
  const auto answer = nlohmann::json::parse(bisection.out);
  EXPECT_EQ(answer.at("steps"),
            (std::vector<std::string>{"torch-2.6.0", "torch-2.7.0", "torch-2.8.0", "torch-2.9.0", "torch-2.10.0"}));
  EXPECT_EQ(answer.at("step"), "torch-2.8.0");
  EXPECT_EQ(answer.at("last_good"), "torch-2.7.0");
  // Made when measured, each with its lock of hashes; 2.9 was never needed, so never made.
  for (const auto& version : {"2.7.0", "2.8.0"}) {
    EXPECT_TRUE(std::filesystem::exists(made / ("torch-" + std::string(version)) / "bin/python3")) << version;
    EXPECT_NE(testing::slurp(made / ("torch-" + std::string(version) + ".lock")).find("torch==" + std::string(version) +
                                                                                     " --hash=sha256:"),
              std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(made / "torch-2.9.0"));
  EXPECT_NE(bisection.err.find("making environment torch-2.8.0"), std::string::npos) << bisection.err;
  // The explain it prints for why offers the two made sides to its own local agent: without them it waited, without
  // end, for an agent that offered them.
  for (const auto* version : {"2.7.0", "2.8.0"}) {
    EXPECT_NE(answer.at("conclusion")
                  .get<std::string>()
                  .find(" --env 'torch-" + std::string(version) + "=" +
                        (made / ("torch-" + std::string(version)) / "bin/python3").string() + "'"),
              std::string::npos)
        << answer.at("conclusion");
  }

  // Resumed with a made step to measure again (its sweep cancelled): this run's agent offers the environment an
  // earlier run made, found made, instead of waiting for an agent that offers it (it once waited out --timeout-s).
  store::Database(db().string())
      .execute(
          "UPDATE sweeps SET state = 'cancelled' WHERE sweep_id IN (SELECT s.sweep_id FROM sweeps s JOIN jobs j "
          "ON j.sweep_id = s.sweep_id WHERE json_extract(j.document, '$.env') = 'torch-2.8.0')");
  // Its store a schema version older, as an earlier torchsweep left it (migration 27 undone): the local bisection
  // migrates it first, as `run` does; it once refused to read it ("reading never migrates a store").
  store::Database(db().string()).execute("DROP TABLE regressions; PRAGMA user_version = 26");
  // And 2.7.0's environment removed since (as --disk-budget-gib removes the least recently used): its step is read
  // back from the store, so it is not made again (it once was, before the step was even looked up).
  std::filesystem::remove_all(made / "torch-2.7.0");
  const auto resumed = bisect();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.err.find("making environment torch-2.7.0"), std::string::npos) << resumed.err;
  EXPECT_FALSE(std::filesystem::exists(made / "torch-2.7.0"));
  EXPECT_EQ(nlohmann::json::parse(resumed.out).at("step"), "torch-2.8.0");
  EXPECT_NE(resumed.err.find("env=torch-2.8.0: measuring it beside env=torch-2.6.0"), std::string::npos) << resumed.err;
  EXPECT_FALSE(std::filesystem::exists(made / "torch-2.9.0"));

  // One that cannot be made leaves no venv, and says why, now and at the next try.
  const auto missing = make("2.99.0");
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("No matching distribution found for torch==2.99.0"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(made / "torch-2.99.0"));
  EXPECT_TRUE(std::filesystem::exists(made / "torch-2.99.0.failed"));
  EXPECT_NE(make("2.99.0").err.find("could not be made before"), std::string::npos);
  // A cluster's agents offer what they have: made environments are for a local agent.
  const auto remote = torchsweep({"bisect", "runner=fake", "model=mlp", "--good", "env=a", "--bad", "env=b",
                                  "--make-environments", "--coordinator", "127.0.0.1:1", "--db", db().string()});
  EXPECT_EQ(remote.exit_code, exit_code::invalid_input);
  EXPECT_NE(remote.err.find("--make-environments: only with a local agent"), std::string::npos) << remote.err;
}

}  // namespace
}  // namespace ts
