// Real coordinator and agent processes on 127.0.0.1 (ephemeral ports).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "shared/version.hpp"
#include "tests/support/cluster.hpp"

namespace ts {
namespace {

using namespace std::chrono_literals;
using simulation::wait_for;

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
  // The next frame's message (null when the connection closed first).
  static nlohmann::json read_frame(int fd) {
    unsigned char header[4];
    if (::recv(fd, header, 4, MSG_WAITALL) != 4) return nullptr;
    const auto length =
        (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) | (uint32_t{header[2]} << 8) | uint32_t{header[3]};
    std::string payload(length, '\0');
    if (::recv(fd, payload.data(), length, MSG_WAITALL) != static_cast<ssize_t>(length)) return nullptr;
    return nlohmann::json::parse(payload);
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
                                     frame(R"({"v":2,"type":"submit_everything"})")}) {
    const int fd = raw_connection();
    ASSERT_EQ(::send(fd, hostile.data(), hostile.size(), 0), static_cast<ssize_t>(hostile.size()));
    EXPECT_EQ(read_until_closed(fd).find("<not closed>"), std::string::npos);
  }
  // The coordinator kept serving: the agent is still there, status answers.
  EXPECT_EQ(agent_names(), Names{"node-a"});
}

// #53's slow link, end to end: a hello that arrives in pieces over longer
// than the coordinator's handshake timeout (5 s) is not timed out while its
// bytes keep coming, and `status` shows the connection joining meanwhile.
TEST_F(CoordinatorAndAgents, AHelloStillArrivingIsJoiningNotTimedOut) {
  start_coordinator();
  const nlohmann::json capabilities{{"hostname", "far"},
                                    {"cpu_cores", 1},
                                    {"memory_bytes", 0},
                                    {"gpus", nlohmann::json::array()},
                                    {"padding", std::string(20'000, 'm')}};  // as an agent's model lists are
  const auto hello = frame(nlohmann::json{
      {"v", 2},
      {"type", "hello"},
      {"role", "client"},
      {"name", "slow-link"},
      {"version", std::string(version::number())},
      {"capabilities",
       capabilities}}.dump());
  const int fd = raw_connection();
  const auto started = std::chrono::steady_clock::now();
  const std::size_t piece = hello.size() / 8 + 1;
  for (std::size_t sent = 0, pieces = 0; sent < hello.size(); ++pieces) {
    const auto size = std::min(piece, hello.size() - sent);
    ASSERT_EQ(::send(fd, hello.data() + sent, size, 0), static_cast<ssize_t>(size));
    sent += size;
    if (pieces == 2) {
      // Joining, by address, with what has arrived.
      ASSERT_TRUE(wait_for(
          [&] {
            const auto reply = torchsweep({"status", "--json", "--coordinator", endpoint()});
            if (reply.exit_code != 0) return false;
            const auto joining = nlohmann::json::parse(reply.out).value("joining", nlohmann::json::array());
            return joining.size() == 1 && joining[0].at("received_bytes") == sent &&
                   joining[0].at("address").get<std::string>().rfind("127.0.0.1:", 0) == 0;
          },
          5s));
    }
    // The slow link's pace, not a wait for a condition: eight pieces over 7 s, each gap under the timeout.
    if (sent < hello.size()) std::this_thread::sleep_for(900ms);
  }
  ASSERT_GT(std::chrono::steady_clock::now() - started, 5s);
  char header[4];
  ASSERT_EQ(::recv(fd, header, 4, MSG_WAITALL), 4) << "closed: the hello was timed out while it arrived";
  const auto length = (static_cast<uint32_t>(static_cast<unsigned char>(header[0])) << 24) |
                      (static_cast<uint32_t>(static_cast<unsigned char>(header[1])) << 16) |
                      (static_cast<uint32_t>(static_cast<unsigned char>(header[2])) << 8) |
                      static_cast<unsigned char>(header[3]);
  std::string payload(length, '\0');
  ASSERT_EQ(::recv(fd, payload.data(), length, MSG_WAITALL), static_cast<ssize_t>(length));
  EXPECT_EQ(nlohmann::json::parse(payload).at("type"), "welcome");
  const auto after = torchsweep({"status", "--json", "--coordinator", endpoint()});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(nlohmann::json::parse(after.out).at("joining"), nlohmann::json::array());
  ::close(fd);
}

// #53 item 4: an agent names its model lists by digest; the coordinator asks
// for the lists it lacks, once, keeps each once, and submit checks models
// against them as before. A restarted coordinator still has them.
TEST_F(CoordinatorAndAgents, AgentsOfOneImageSendEachModelListOnceAndSubmitStillChecksModels) {
  start_coordinator();
  const std::vector<std::string> runner{"--runner", "libtorch=" + fake_runner().string()};
  const auto sent_lists = [&](const std::string& agent) {
    const auto log = testing::slurp(directory_ / (agent + ".log"));
    std::size_t count = 0;
    for (auto at = log.find("sending the coordinator"); at != std::string::npos;
         at = log.find("sending the coordinator", at + 1))
      ++count;
    return count;
  };
  start_agent("node-a", runner);
  ASSERT_TRUE(wait_for([&] { return agent_names() == Names{"node-a"}; }, 20s));
  start_agent("node-b", runner);
  ASSERT_TRUE(wait_for([&] { return agent_names() == Names{"node-a", "node-b"}; }, 20s));
  EXPECT_NE(testing::slurp(directory_ / "node-a.log").find("sending the coordinator 1 model lists it lacks"),
            std::string::npos);
  EXPECT_EQ(sent_lists("node-b"), 0u);
  ASSERT_TRUE(wait_for([&] { return store_rows("SELECT count(*) FROM agents") == "2\n"; }, 10s));
  EXPECT_EQ(store_rows("SELECT names FROM model_lists"), "[\"mlp\",\"python:*\"]\n");
  const auto digest = store_rows("SELECT digest FROM model_lists");
  ASSERT_EQ(digest.rfind("sha256:", 0), 0u) << digest;
  EXPECT_EQ(store_rows("SELECT count(*) FROM agents WHERE json_extract(capabilities, '$.models.libtorch') = '" +
                       digest.substr(0, digest.size() - 1) + "'"),
            "2\n");

  const auto typo = write_file("typo.yaml", "name: typo\naxes:\n  model: [mlp, nosuch]\nfixed: {batch_size: 8}\n");
  const auto refused = torchsweep({"submit", typo.string(), "--coordinator", endpoint()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("model: no runner 'libtorch' can run model 'nosuch'"), std::string::npos) << refused.err;

  const int port = port_;
  coordinator_->signal(SIGKILL);
  coordinator_->wait_exit(10s);
  start_coordinator(port);
  ASSERT_TRUE(wait_for([&] { return agent_names() == Names{"node-a", "node-b"}; }, 30s));
  EXPECT_EQ(sent_lists("node-a"), 1u);
  EXPECT_EQ(sent_lists("node-b"), 0u);
}

// An agent whose lists do not match the digests it named, or that sends
// something else, is refused naming the list; nothing of it is kept.
TEST_F(CoordinatorAndAgents, ModelListsThatDoNotHashToTheirDigestsAreRefused) {
  start_coordinator();
  const nlohmann::json names = {"mlp", "resnet18"};
  const auto digest = "sha256:" + std::string(64, 'a');  // not the digest of `names`
  for (const auto& [answer, field] :
       {std::pair{nlohmann::json{{"v", 2}, {"type", "lists"}, {"lists", {{digest, names}}}}, "lists." + digest},
        std::pair{nlohmann::json{{"v", 2}, {"type", "lists"}, {"lists", nlohmann::json::object()}},
                  std::string("lists")},
        std::pair{nlohmann::json{{"v", 2}, {"type", "heartbeat"}, {"running", nlohmann::json::array()}},
                  std::string("type")}}) {
    const int fd = raw_connection();
    const auto hello = frame(nlohmann::json{{"v", 2},
                                            {"type", "hello"},
                                            {"role", "agent"},
                                            {"name", "liar"},
                                            {"version", std::string(version::number())},
                                            {"capabilities",
                                             {{"hostname", "liar"},
                                              {"cpu_cores", 1},
                                              {"memory_bytes", 0},
                                              {"gpus", nlohmann::json::array()},
                                              {"runners", {"libtorch"}},
                                              {"models", {{"libtorch", digest}}}}}}
                                 .dump());
    ASSERT_EQ(::send(fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
    const auto welcome = read_frame(fd);
    ASSERT_EQ(welcome.value("type", ""), "welcome") << welcome.dump();
    EXPECT_EQ(welcome.at("send_lists"), nlohmann::json::array({digest}));
    const auto sent = frame(answer.dump());
    ASSERT_EQ(::send(fd, sent.data(), sent.size(), 0), static_cast<ssize_t>(sent.size()));
    const auto refused = read_frame(fd);
    EXPECT_EQ(refused.value("type", ""), "error") << refused.dump();
    EXPECT_EQ(refused.value("field", ""), field) << refused.dump();
    EXPECT_TRUE(refused.value("fatal", false));
    ::close(fd);
  }
  EXPECT_TRUE(agent_names().empty());
  EXPECT_EQ(store_rows("SELECT count(*) FROM model_lists"), "0\n");
  EXPECT_EQ(store_rows("SELECT count(*) FROM agents"), "0\n");
}

TEST_F(CoordinatorAndAgents, AnAgentThatCannotRegisterSaysSoAtErrorWithTheReason) {
  // No coordinator listens (port 0 refuses at once): warnings first, then,
  // past --join-error-after-s, an ERROR a failed attempt, naming the reason.
  start_agent("unheard", {"--join-error-after-s", "1"});
  const auto log = directory_ / "unheard.log";
  ASSERT_TRUE(wait_for([&] { return testing::slurp(log).find("has not registered") != std::string::npos; }, 15s))
      << testing::slurp(log);
  const auto text = testing::slurp(log);
  const auto line = text.substr(text.rfind('\n', text.find("has not registered")) + 1);
  EXPECT_NE(line.find(" ERROR "), std::string::npos) << line;
  EXPECT_NE(line.find("agent unheard has not registered with coordinator 127.0.0.1:0"), std::string::npos) << line;
  EXPECT_NE(line.find("Connection refused"), std::string::npos) << line;  // the reason
  EXPECT_NE(text.find(" WARN  agent: coordinator 127.0.0.1:0"), std::string::npos) << text;  // before it
}

TEST_F(CoordinatorAndAgents, IncompatibleProtocolVersionIsRefusedWithAReason) {
  start_coordinator();
  const int fd = raw_connection();
  const auto hello = frame(R"({"v":3,"type":"hello","role":"client","name":"future","version":"9.0"})");
  ::send(fd, hello.data(), hello.size(), 0);
  const auto reply = read_until_closed(fd);
  ASSERT_GT(reply.size(), 4u);
  const auto error = nlohmann::json::parse(reply.substr(4));
  EXPECT_EQ(error.at("type"), "error");
  EXPECT_EQ(error.at("field"), "v");
  EXPECT_EQ(error.at("fatal"), true);
  EXPECT_NE(error.at("reason").get<std::string>().find("speaks 2"), std::string::npos);
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
  EXPECT_EQ(store_rows("SELECT name FROM agents"), "trusted\n");
  EXPECT_EQ(store_rows("SELECT COUNT(*) FROM sweeps"), "0\n");
  const auto log = testing::slurp(directory_ / "coordinator.log");
  EXPECT_NE(log.find("authentication failed for agent 'intruder'"), std::string::npos) << log;
  EXPECT_NE(log.find("127.0.0.1:"), std::string::npos);
}

// A CA, and a certificate it signed for 127.0.0.1 only, made with the
// openssl command line the way docs/security.md tells operators to.
struct TestCertificates {
  std::filesystem::path ca, certificate, key;
};

TestCertificates make_certificates(const std::filesystem::path& directory, const std::string& name) {
  const auto path = [&](const std::string& file) { return (directory / (name + "-" + file)).string(); };
  { std::ofstream(path("ext.cnf")) << "subjectAltName=IP:127.0.0.1\n"; }
  const std::vector<std::vector<std::string>> steps{
      {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
       path("ca.key"), "-out", path("ca.pem"), "-days", "1", "-subj", "/CN=" + name + " test CA"},
      {"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
       path("server.key"), "-out", path("server.csr"), "-subj", "/CN=torchsweep coordinator"},
      {"openssl", "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
       "-CAcreateserial", "-out", path("server.pem"), "-days", "1", "-extfile", path("ext.cnf")}};
  for (const auto& step : steps) {
    const auto made = testing::run_program(step);
    EXPECT_EQ(made.exit_code, 0) << made.err;
  }
  return {path("ca.pem"), path("server.pem"), path("server.key")};
}

TEST_F(CoordinatorAndAgents, TlsAdmitsOnlyPeersThatVerifyTheCoordinator) {
  const auto trusted = make_certificates(directory_, "trusted");
  const auto rogue = make_certificates(directory_, "rogue");
  const auto token = write_file("token", "correct horse battery staple 42");
  start_coordinator(0, {"--token-file", token.string(), "--tls-cert", trusted.certificate.string(), "--tls-key",
                        trusted.key.string()});
  start_agent("over-tls", {"--token-file", token.string(), "--tls-ca", trusted.ca.string(), "--runner",
                           "libtorch=" + fake_runner().string()});
  start_agent("plain", {"--token-file", token.string()});
  const std::vector<std::string> client{"--token-file", token.string(), "--tls-ca", trusted.ca.string()};
  const auto status = [&](const std::string& coordinator, const std::vector<std::string>& options) {
    std::vector<std::string> args{"status", "--json", "--coordinator", coordinator};
    args.insert(args.end(), options.begin(), options.end());
    return torchsweep(args);
  };
  ASSERT_TRUE(wait_for(
      [&] {
        const auto reply = status(endpoint(), client);
        return reply.exit_code == 0 && nlohmann::json::parse(reply.out).at("agents").size() == 1;
      },
      15s));
  // A sweep goes out and its results come back over TLS.
  const auto sweep = write_file("sweep.yaml", "name: over-tls\naxes: {batch_size: [1, 2, 3]}\nfixed: {model: mlp}\n");
  std::vector<std::string> submit{"submit", sweep.string(), "--coordinator", endpoint()};
  submit.insert(submit.end(), client.begin(), client.end());
  const auto submitted = torchsweep(submit);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_TRUE(wait_for([&] { return results().size() == 3; }, 30s));
  const auto agents = nlohmann::json::parse(status(endpoint(), client).out).at("agents");
  ASSERT_EQ(agents.size(), 1u);  // the plain agent kept knocking all along
  EXPECT_EQ(agents[0].at("name"), "over-tls");

  // A plain client, one trusting another CA, and one that dialled a name
  // the certificate does not carry all fail before saying anything.
  const auto plain = status(endpoint(), {"--token-file", token.string()});
  EXPECT_NE(plain.exit_code, 0);
  const auto wrong_ca = status(endpoint(), {"--token-file", token.string(), "--tls-ca", rogue.ca.string()});
  EXPECT_NE(wrong_ca.exit_code, 0);
  EXPECT_NE(wrong_ca.err.find("certificate verify failed"), std::string::npos) << wrong_ca.err;
  const auto wrong_name = status("localhost:" + std::to_string(port_), client);
  EXPECT_NE(wrong_name.exit_code, 0);
  EXPECT_NE(wrong_name.err.find("certificate verify failed"), std::string::npos) << wrong_name.err;
  const auto log = testing::slurp(directory_ / "coordinator.log");
  EXPECT_NE(log.find("refused: no TLS handshake"), std::string::npos) << log;

  // A bad certificate file is a bad argument, named as such.
  const auto bad = torchsweep({"coordinator", "--db", db().string(), "--token-file", token.string(), "--tls-cert",
                               rogue.ca.string(), "--tls-key", trusted.key.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--tls-cert"), std::string::npos) << bad.err;
}

TEST_F(CoordinatorAndAgents, WithoutATokenOnlyLoopbackIsAllowed) {
  const auto refused = torchsweep({"coordinator", "--listen", "0.0.0.0:0", "--db", db().string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("needs a token"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace ts
