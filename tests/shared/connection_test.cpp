#include "shared/wire/connection.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "shared/wire/frame.hpp"

namespace ts::wire {
namespace {

using namespace std::chrono_literals;

// A connection on one end of a loopback TCP pair; the test writes frames on
// the other end itself, blocking, so they arrive whatever the loop is doing.
struct LoopbackPair {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io, {asio::ip::address_v4::loopback(), 0}};
  asio::ip::tcp::socket peer{io};
  std::shared_ptr<Connection> connection;

  LoopbackPair() {
    peer.connect(acceptor.local_endpoint());
    connection = std::make_shared<Connection>(acceptor.accept());
    connection->start();
  }
  void peer_sends(const nlohmann::json& message) {
    asio::write(peer, asio::buffer(encode_frame(message, default_max_frame_bytes)));
  }
  // What receive_within(timeout) gave: the message, or the error it threw.
  struct Outcome {
    std::optional<nlohmann::json> message;
    std::exception_ptr failure;
  };
  void receive_within(std::chrono::milliseconds timeout, Outcome& outcome) {
    asio::co_spawn(
        io,
        [&, timeout]() -> asio::awaitable<void> {
          outcome.message = co_await wire::receive_within(*connection, timeout);
        },
        [&](std::exception_ptr failure) {
          outcome.failure = failure;
          io.stop();
        });
  }
};

// The event loop held past the deadline, as a coordinator busy with a
// backlog of results is: work, not a wait on a condition.
void keep_the_loop_busy(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(ReceiveWithin, AMessageThatArrivedWhileTheLoopWasBusyIsNotSilence) {
  LoopbackPair pair;
  LoopbackPair::Outcome outcome;
  pair.receive_within(100ms, outcome);
  asio::post(pair.io, [&] {
    pair.peer_sends({{"type", "heartbeat"}});
    keep_the_loop_busy(400ms);
  });
  pair.io.run_for(5s);
  ASSERT_FALSE(outcome.failure) << "a heartbeat waiting in the socket was taken for the peer's silence";
  ASSERT_TRUE(outcome.message) << "no outcome within 5 s";
  EXPECT_EQ(outcome.message->at("type"), "heartbeat");
}

TEST(ReceiveWithin, APeerThatSendsNothingTimesOut) {
  LoopbackPair pair;
  LoopbackPair::Outcome outcome;
  pair.receive_within(100ms, outcome);
  pair.io.run_for(5s);
  ASSERT_TRUE(outcome.failure);
  try {
    std::rethrow_exception(outcome.failure);
  } catch (const boost::system::system_error& error) {
    EXPECT_EQ(error.code(), asio::error::timed_out);
  }
}

TEST(ReceiveWithin, AHalfSentFrameThenSilenceTimesOut) {
  LoopbackPair pair;
  LoopbackPair::Outcome outcome;
  pair.receive_within(100ms, outcome);
  const auto frame = encode_frame({{"type", "heartbeat"}}, default_max_frame_bytes);
  asio::write(pair.peer, asio::buffer(frame.data(), frame.size() - 1));
  pair.io.run_for(5s);
  EXPECT_TRUE(outcome.failure) << "a peer that stopped mid-frame kept its session";
}

}  // namespace
}  // namespace ts::wire
