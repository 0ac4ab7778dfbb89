// The job registry's rules, one by one, against an in-memory store: what it
// sends to agents and what the store then says.
#include "coordinator/job_registry.hpp"

#include <gtest/gtest.h>

#include <boost/asio.hpp>

#include "shared/wire/protocol.hpp"

namespace ts::coordinator {
namespace {

using namespace std::chrono_literals;
using Clock = JobRegistry::Clock;

class Registry : public ::testing::Test {
 protected:
  Registry() {
    options_.reattach_grace = 1s;
    options_.deadline_margin = 5s;
    registry_ = std::make_unique<JobRegistry>(store_, batch_, options_,
                                              [this](const std::string& agent, const nlohmann::json& message) {
                                                sent_.push_back({agent, message});
                                              });
    const nlohmann::json document{{"model", "mlp"}, {"batch_size", 4}, {"timeout_s", 10}};
    const nlohmann::json spec{{"name", "demo"}, {"axes", {{"model", {"mlp"}}}}};
    store_.add_sweep({"s", "demo", spec, {}, "me", 0, "2026-12-01T00:00:00.000Z"},
                     {{"s/0", 0, "a", 0, "libtorch", 1, document, 2}});
    registry_->add(*store_.job("s/0"), SweepSettings::of(1, sweep::parse(spec, "test")));
  }
  // Commits the open batch: assignments and acknowledgements leave then.
  void commit() {
    io_.restart();  // poll() that ran out of work left the io_context stopped
    io_.poll();
  }
  void connect(const std::string& agent, nlohmann::json running = nlohmann::json::array()) {
    registry_->agent_connected({agent, {}, {"libtorch"}, {}}, running);
    commit();
  }
  // The messages of `type` sent since the last call, as "agent job attempt".
  std::vector<std::string> take(const std::string& type) {
    std::vector<std::string> taken;
    std::erase_if(sent_, [&](const std::pair<std::string, nlohmann::json>& sent) {
      if (sent.second.at("type") != type) return false;
      const auto& m = sent.second;
      const auto job = m.contains("job_id") ? m.at("job_id") : m.at("job");
      taken.push_back(sent.first + " " + job.get<std::string>() + " " + std::to_string(m.value("attempt", 0)));
      return true;
    });
    return taken;
  }
  static nlohmann::json running(const std::string& job, int64_t attempt) {
    return nlohmann::json::array({{{"job_id", job}, {"attempt", attempt}}});
  }
  nlohmann::json failed(int64_t attempt) {
    return wire::make_message(
        "job_failed",
        {{"job_id", "s/0"}, {"attempt", attempt}, {"kind", "crashed"}, {"reason", "boom"}, {"retryable", true}});
  }

  boost::asio::io_context io_;
  store::Store store_{":memory:"};
  WriteBatch batch_{io_, store_.database()};
  RegistryOptions options_;
  std::unique_ptr<JobRegistry> registry_;
  std::vector<std::pair<std::string, nlohmann::json>> sent_;
};

using Sent = std::vector<std::string>;

TEST_F(Registry, ARefusedAssignmentIsQueuedAgainAtNoCostAndTheAgentWaitsForACleanHeartbeat) {
  connect("a1");
  EXPECT_EQ(take("assign"), Sent{"a1 s/0 1"});
  registry_->refused("a1", {{"job_id", "s/0"}, {"attempt", 1}, {"reason", "GPU 0 is in use"}});
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "queued");
  EXPECT_EQ(store_.job("s/0")->attempts, 0);
  EXPECT_TRUE(take("assign").empty());  // blocked until its heartbeat is clean
  registry_->heartbeat("a1", nlohmann::json::array());
  commit();
  EXPECT_EQ(take("assign"), Sent{"a1 s/0 1"});  // the same attempt number: attempt 1 never ran
}

TEST_F(Registry, WhatAnAgentRunsButShouldNotIsCancelledBeforeItGetsMore) {
  connect("a1", running("s/9", 3));
  EXPECT_EQ(take("cancel"), Sent{"a1 s/9 3"});
  EXPECT_TRUE(take("assign").empty());
  registry_->heartbeat("a1", running("s/9", 3));
  EXPECT_EQ(take("cancel"), Sent{"a1 s/9 3"});
  registry_->heartbeat("a1", nlohmann::json::array());
  commit();
  EXPECT_EQ(take("assign"), Sent{"a1 s/0 1"});
}

TEST_F(Registry, AnAttemptItsAgentNoLongerReportsIsQueuedAgainAfterTheGrace) {
  connect("a1");
  take("assign");
  registry_->heartbeat("a1", running("s/0", 1));
  registry_->expire(Clock::now() + 10 * options_.reattach_grace);  // reported: nothing due
  EXPECT_EQ(store_.job("s/0")->state, "running");
  registry_->heartbeat("a1", nlohmann::json::array());
  registry_->expire(Clock::now());
  EXPECT_EQ(store_.job("s/0")->state, "running");  // within the grace
  registry_->expire(Clock::now() + options_.reattach_grace + 1ms);
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "running");  // queued, then assigned again at once
  EXPECT_EQ(store_.job("s/0")->attempts, 2);
  EXPECT_EQ(take("assign"), Sent{"a1 s/0 2"});
}

TEST_F(Registry, AnAttemptPastTheCoordinatorsDeadlineIsCancelledAndRetried) {
  connect("a1");
  take("assign");
  registry_->heartbeat("a1", running("s/0", 1));
  registry_->expire(Clock::now() + 10s + options_.deadline_margin - 1s);
  EXPECT_TRUE(take("cancel").empty());
  registry_->expire(Clock::now() + 10s + options_.deadline_margin + 1s);
  commit();
  EXPECT_EQ(take("cancel"), Sent{"a1 s/0 1"});
  EXPECT_EQ(store_.job("s/0")->attempts, 1);  // the agent must first stop attempt 1
  EXPECT_EQ(store_.job("s/0")->state, "queued");
}

TEST_F(Registry, TheLateOutcomeOfASupersededAttemptIsAcknowledgedAsSuchAndNotCounted) {
  connect("a1");
  take("assign");
  registry_->agent_lost("a1");
  registry_->expire(Clock::now() + options_.reattach_grace + 1ms);  // away too long: attempt 1 given up
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "queued");
  connect("a2");
  EXPECT_EQ(take("assign"), Sent{"a2 s/0 2"});
  const auto ack = registry_->outcome("a1", AgentMessage::read(failed(1), std::nullopt));
  EXPECT_EQ(ack.value("superseded", false), true);
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "running");
  EXPECT_EQ(store_.job("s/0")->agent, "a2");
  EXPECT_EQ(registry_->outcome("a2", AgentMessage::read(failed(2), std::nullopt)).value("superseded", false), false);
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "failed");  // attempt 2 of 2
}

TEST_F(Registry, AnAgentBackWithinTheGraceKeepsItsAttempt) {
  connect("a1");
  take("assign");
  registry_->agent_lost("a1");
  connect("a1", running("s/0", 1));
  EXPECT_TRUE(take("cancel").empty());
  registry_->expire(Clock::now() + options_.reattach_grace + 1ms);
  commit();
  EXPECT_EQ(store_.job("s/0")->state, "running");
  EXPECT_EQ(store_.job("s/0")->attempts, 1);
}

}  // namespace
}  // namespace ts::coordinator
