#include "agent/trace_shipping.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "shared/digest.hpp"
#include "shared/wire/attachment.hpp"

namespace ts::agent {
namespace {

class TraceShipping : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("ts_trace_shipping_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
    std::ofstream(directory_ / "profile.trace.json.gz") << contents_;
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  // A job_result message whose result names `file` as its trace, within `limit_mib`.
  nlohmann::json message(const std::string& file, double limit_mib = 8) const {
    return {{"type", "job_result"},
            {"result",
             {{"job", {{"job_id", "j"}, {"profile", {{"max_trace_mib", limit_mib}}}}},
              {"warnings", nlohmann::json::array()},
              {"profile",
               {{"trace", {{"file", file}, {"bytes", contents_.size()}, {"sha256", sha256_hex(contents_)}}}}}}}};
  }

  std::string contents_ = "a gzip Chrome trace";
  std::filesystem::path directory_;
};

TEST_F(TraceShipping, TheTraceTravelsWithItsResult) {
  auto shipped = message("profile.trace.json.gz");
  attach_trace(shipped, directory_);
  EXPECT_EQ(wire::contents_of(shipped.at("trace"), "trace"), contents_);
  EXPECT_FALSE(shipped.at("result").at("profile").at("trace").contains("stored"));  // the coordinator says
}

TEST_F(TraceShipping, ATraceOverItsLimitOrOutsideTheJobsDirectoryStaysBehindAndTheResultSaysWhy) {
  auto large = message("profile.trace.json.gz", 1e-6);
  attach_trace(large, directory_);
  EXPECT_FALSE(large.contains("trace"));
  const auto& trace = large.at("result").at("profile").at("trace");
  EXPECT_EQ(trace.at("stored"), false);
  EXPECT_NE(trace.at("reason").get<std::string>().find("over the job's profile.max_trace_mib"), std::string::npos);
  EXPECT_EQ(large.at("result").at("warnings").size(), 1u);

  for (const std::string file : {"../profile.trace.json.gz", "/etc/hostname", "missing.json.gz"}) {
    auto shipped = message(file);
    attach_trace(shipped, directory_);
    EXPECT_FALSE(shipped.contains("trace")) << file;
    EXPECT_EQ(shipped.at("result").at("profile").at("trace").at("stored"), false) << file;
  }
  auto plain = message("");
  plain["result"].erase("profile");
  attach_trace(plain, directory_);
  EXPECT_FALSE(plain.contains("trace"));
}

}  // namespace
}  // namespace ts::agent
