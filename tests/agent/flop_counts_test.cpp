// The agent's FLOP counts for runners that count none: the counting runner
// asked with --count-flops, once per model, file and shape.
#include "agent/flop_counts.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

class FlopCountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(directory_ / "models");
    std::ofstream(directory_ / "models" / "net.pt") << "a model";
    // A counting runner: each call leaves a line in calls.log; argv: --count-flops --job JOB --out OUT.
    counter_ = directory_ / "counter";
    std::ofstream(counter_) << "#!/bin/sh\n"
                            << "echo \"$1\" >> " << (directory_ / "calls.log") << "\n"
                            << "[ \"$1\" = --count-flops ] || exit 2\n"
                            << "grep -Eq '\"batch_size\": *99' \"$3\" && { echo '2026-01-01T00:00:00.000Z ERROR counter: no count' >&2; exit 3; }\n"
                            << "echo '{\"counter\": \"torch.utils.flop_counter\", \"forward_per_sample\": 1024, "
                               "\"per_step\": 24576}' > \"$5\"\n";
    std::filesystem::permissions(counter_, std::filesystem::perms::owner_all);
  }

  FlopCount count(const nlohmann::json& job) {
    boost::asio::io_context io;
    FlopCount outcome;
    boost::asio::co_spawn(io,
                          counts_.count(job, {counter_.string()}, "counter in environment system", directory_ / "work"),
                          [&](std::exception_ptr error, FlopCount result) {
                            if (error) std::rethrow_exception(error);
                            outcome = std::move(result);
                          });
    io.run();
    return outcome;
  }
  int calls() {
    std::ifstream in(directory_ / "calls.log");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  nlohmann::json job(int64_t batch_size) {
    return {{"schema_version", 1},  {"model", "torchscript:net.pt"},
            {"runner", "libtorch"}, {"batch_size", batch_size},
            {"mode", "eager"},      {"model_root", (directory_ / "models").string()}};
  }

  testing::TempDirectory temp_{"ts_flop_counts"};
  const std::filesystem::path& directory_ = temp_.path();
  std::filesystem::path counter_;
  FlopCounts counts_;
};

TEST_F(FlopCountsTest, ACountIsAskedOncePerModelFileAndShapeAndSaysWhoCounted) {
  const auto first = count(job(8));
  ASSERT_TRUE(first.counted) << first.problem;
  EXPECT_EQ(first.counted->at("per_step"), 24576);
  EXPECT_EQ(first.counted->at("counted_by"), "counter in environment system");
  auto compiled = job(8);
  compiled["mode"] = "compiled";  // the mode does not change the count
  EXPECT_EQ(count(compiled).counted, first.counted);
  EXPECT_EQ(calls(), 1);
  EXPECT_TRUE(count(job(16)).counted);  // another shape: counted again
  EXPECT_EQ(calls(), 2);
  std::filesystem::resize_file(directory_ / "models" / "net.pt", 100);  // the file saved again
  EXPECT_TRUE(count(job(8)).counted);
  EXPECT_EQ(calls(), 3);
}

TEST_F(FlopCountsTest, ACountThatFailsIsAProblemNamingTheCounterAndIsAskedAgainNextTime) {
  const auto failed = count(job(99));
  EXPECT_FALSE(failed.counted);
  EXPECT_NE(failed.problem.find("counter in environment system did not count them"), std::string::npos)
      << failed.problem;
  EXPECT_NE(failed.problem.find("no count"), std::string::npos) << failed.problem;
  EXPECT_FALSE(count(job(99)).counted);
  EXPECT_EQ(calls(), 2);
}

TEST(LacksCountedFlops, OnlyAModelWithoutAFormulaAndWithoutACountLacksOne) {
  const nlohmann::json builtin{{"job", {{"model", "mlp"}, {"batch_size", 8}}}};
  EXPECT_FALSE(lacks_counted_flops(builtin));
  nlohmann::json scripted{{"job", {{"model", "torchscript:net.pt"}, {"batch_size", 8}}},
                          {"execution", nlohmann::json::object()}};
  EXPECT_TRUE(lacks_counted_flops(scripted));
  scripted["execution"]["counted_flops"] = {
      {"counter", "torch.utils.flop_counter"}, {"forward_per_sample", 1}, {"per_step", 3}};
  EXPECT_FALSE(lacks_counted_flops(scripted));
}

}  // namespace
}  // namespace ts::agent
