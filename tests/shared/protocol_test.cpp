#include "shared/wire/protocol.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"

namespace ts::wire {
namespace {

std::string refused_field(const nlohmann::json& message) {
  try {
    validate_message(message);
  } catch (const InvalidInput& error) {
    return error.field();
  }
  return "<accepted>";
}

nlohmann::json agent_hello() {
  return make_message(
      "hello", {{"role", "agent"},
                {"name", "node-a"},
                {"version", "0.1.0"},
                {"capabilities",
                 {{"hostname", "h"}, {"cpu_cores", 2}, {"memory_bytes", 1}, {"gpus", nlohmann::json::array()}}}});
}

TEST(Protocol, MessagesCarryVersionAndType) {
  const auto message = make_message("heartbeat");
  EXPECT_EQ(message.at("v"), protocol_version);
  EXPECT_EQ(validate_message(message), "heartbeat");
  EXPECT_EQ(validate_message(agent_hello()), "hello");
  EXPECT_EQ(validate_message(make_error("nope", "field", true)), "error");
}

TEST(Protocol, RefusalsNameTheField) {
  EXPECT_EQ(refused_field({{"type", "hello"}}), "v");
  EXPECT_EQ(refused_field({{"v", protocol_version + 1}, {"type", "heartbeat"}}), "v");
  // Version 1's heartbeat listed bare job ids; now each entry is (job_id, attempt).
  EXPECT_EQ(refused_field(make_message("heartbeat", {{"running", {"s/0001"}}})), "running[0]");
  EXPECT_EQ(refused_field(make_message("launch_missiles")), "type");
  EXPECT_EQ(refused_field(make_message("envelope")), "type");
  auto hello = agent_hello();
  hello["role"] = "admin";
  EXPECT_EQ(refused_field(hello), "role");
  hello = agent_hello();
  hello["capabilities"]["cpu_cores"] = 0;
  EXPECT_EQ(refused_field(hello), "capabilities.cpu_cores");
  hello = agent_hello();
  hello["command"] = "rm -rf /";
  EXPECT_EQ(refused_field(hello), "command");
}

}  // namespace
}  // namespace ts::wire
