// Real coordinator and agent processes on 127.0.0.1 (ephemeral ports).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using testing::wait_for;

class CoordinatorAndAgents : public testing::Cluster {
 protected:
  // A raw TCP connection to the coordinator, for hostile input.
  int raw_connection() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    timeval timeout{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    return fd;
  }
  static std::string frame(const std::string& payload) {
    const auto n = static_cast<uint32_t>(payload.size());
    return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                       static_cast<char>(n)} +
           payload;
  }
  // Everything the coordinator sends until it closes (or 5 s pass).
  static std::string read_until_closed(int fd) {
    std::string received;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) received.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    return n == 0 ? received : received + "<not closed>";
  }
};

using Names = std::vector<std::string>;

TEST_F(CoordinatorAndAgents, AgentsRegisterAndAppearInStatus) {
  start_coordinator();
  for (const char* name : {"node-a", "node-b", "node-c"}) start_agent(name);
  EXPECT_TRUE(wait_for(
      [&] {
        return agent_names() == Names{"node-a", "node-b", "node-c"};
      },
      15s))
      << ::testing::PrintToString(agent_names());
}

TEST_F(CoordinatorAndAgents, MalformedAndOversizedFramesCloseOnlyThatConnection) {
  start_coordinator();
  start_agent("node-a");
  ASSERT_TRUE(wait_for([&] { return agent_names() == Names{"node-a"}; }, 15s));
  for (const std::string& hostile : {frame("{not json"), frame("[1,2,3]"), std::string("\x7f\xff\xff\xff", 4),
                                     frame(R"({"v":1,"type":"submit_everything"})")}) {
    const int fd = raw_connection();
    ASSERT_EQ(::send(fd, hostile.data(), hostile.size(), 0), static_cast<ssize_t>(hostile.size()));
    EXPECT_EQ(read_until_closed(fd).find("<not closed>"), std::string::npos);
  }
  // The coordinator kept serving: the agent is still there, status answers.
  EXPECT_EQ(agent_names(), Names{"node-a"});
}

TEST_F(CoordinatorAndAgents, IncompatibleProtocolVersionIsRefusedWithAReason) {
  start_coordinator();
  const int fd = raw_connection();
  const auto hello = frame(R"({"v":2,"type":"hello","role":"client","name":"future","version":"9.0"})");
  ::send(fd, hello.data(), hello.size(), 0);
  const auto reply = read_until_closed(fd);
  ASSERT_GT(reply.size(), 4u);
  const auto error = nlohmann::json::parse(reply.substr(4));
  EXPECT_EQ(error.at("type"), "error");
  EXPECT_EQ(error.at("field"), "v");
  EXPECT_EQ(error.at("fatal"), true);
  EXPECT_NE(error.at("reason").get<std::string>().find("speaks 1"), std::string::npos);
}

TEST_F(CoordinatorAndAgents, KilledAgentIsDroppedAndAgentsReconnectToARestartedCoordinator) {
  start_coordinator();
  auto& doomed = start_agent("node-a");
  start_agent("node-b");
  ASSERT_TRUE(wait_for([&] { return agent_names().size() == 2; }, 15s));
  doomed.signal(SIGKILL);
  EXPECT_TRUE(wait_for([&] { return agent_names() == Names{"node-b"}; }, 10s));

  const int port = port_;
  coordinator_->signal(SIGKILL);
  coordinator_->wait_exit(10s);
  start_coordinator(port);  // same port: the agent's backoff loop finds it again
  EXPECT_TRUE(wait_for([&] { return agent_names() == Names{"node-b"}; }, 20s));
}

TEST_F(CoordinatorAndAgents, SigtermShutsDownCleanly) {
  start_coordinator();
  auto& agent = start_agent("node-a");
  ASSERT_TRUE(wait_for([&] { return agent_names() == Names{"node-a"}; }, 15s));
  agent.signal(SIGTERM);
  EXPECT_EQ(agent.wait_exit(10s), 0);
  coordinator_->signal(SIGTERM);
  EXPECT_EQ(coordinator_->wait_exit(10s), 0);
}

TEST_F(CoordinatorAndAgents, OnlyPeersWithTheTokenGetIn) {
  const auto token = write_file("token", "correct horse battery staple 42");
  const auto wrong = write_file("wrong", "incorrect donkey battery staple");
  start_coordinator(0, {"--token-file", token.string()});
  start_agent("trusted", {"--token-file", token.string()});
  auto& intruder = start_agent("intruder", {"--token-file", wrong.string()});
  auto& tokenless = start_agent("tokenless");
  // Refused for good: a wrong or missing token is not retried.
  EXPECT_EQ(intruder.wait_exit(15s), 4);
  EXPECT_EQ(tokenless.wait_exit(15s), 4);
  const auto with_token = torchsweep({"status", "--json", "--coordinator", endpoint(), "--token-file", token.string()});
  ASSERT_EQ(with_token.exit_code, 0) << with_token.err;
  ASSERT_TRUE(wait_for(
      [&] {
        const auto reply =
            torchsweep({"status", "--json", "--coordinator", endpoint(), "--token-file", token.string()});
        return reply.exit_code == 0 && nlohmann::json::parse(reply.out).at("agents").size() == 1;
      },
      15s));
  // Clients without the token can neither read nor submit.
  const auto anonymous = torchsweep({"status", "--coordinator", endpoint()});
  EXPECT_EQ(anonymous.exit_code, 4);
  EXPECT_NE(anonymous.err.find("requires a token"), std::string::npos) << anonymous.err;
  const auto sweep = write_file("sweep.yaml", "name: sneaky\naxes: {batch_size: [1]}\nfixed: {model: mlp}\n");
  const auto forged =
      torchsweep({"submit", sweep.string(), "--coordinator", endpoint(), "--token-file", wrong.string()});
  EXPECT_EQ(forged.exit_code, 4);
  // Nothing they sent was stored; the attempts were logged with their address.
  const auto stored =
      testing::run_program({"sqlite3", db().string(), "SELECT name FROM agents; SELECT COUNT(*) FROM sweeps;"});
  if (stored.exit_code == 0) {  // the sqlite3 shell is in the build root
    EXPECT_EQ(stored.out, "trusted\n0\n");
  }
  const auto log = testing::slurp(directory_ / "coordinator.log");
  EXPECT_NE(log.find("authentication failed for agent 'intruder'"), std::string::npos) << log;
  EXPECT_NE(log.find("127.0.0.1:"), std::string::npos);
}

TEST_F(CoordinatorAndAgents, WithoutATokenOnlyLoopbackIsAllowed) {
  const auto refused = torchsweep({"coordinator", "--listen", "0.0.0.0:0", "--db", db().string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("needs a token"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace ts
