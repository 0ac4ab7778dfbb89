#include "shared/wire/connection.hpp"

#include <gtest/gtest.h>

#include <array>
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

  // With `buffer_bytes`, both ends' socket buffers that small, so that what
  // the connection sends waits in them until the test's peer reads it.
  explicit LoopbackPair(int buffer_bytes = 0) {
    if (buffer_bytes > 0) {
      peer.open(asio::ip::tcp::v4());
      peer.set_option(asio::socket_base::receive_buffer_size(buffer_bytes));
    }
    peer.connect(acceptor.local_endpoint());
    auto accepted = acceptor.accept();
    if (buffer_bytes > 0) accepted.set_option(asio::socket_base::send_buffer_size(buffer_bytes));
    connection = std::make_shared<Connection>(std::move(accepted));
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

// #53's slow link, reproduced: an agent's hello (128 KB of model names) at
// 2 KB/s takes a minute, and the coordinator closed it `timed out` after
// the handshake timeout while it was still arriving. Silence times out, not
// a message's total time: here 40 KB at 1 KB every 30 ms, a 100 ms timeout.
TEST(ReceiveWithin, AMessageStillArrivingIsNotSilence) {
  LoopbackPair pair;
  LoopbackPair::Outcome outcome;
  pair.receive_within(100ms, outcome);
  std::string names;
  for (int i = 0; names.size() < 40'000; ++i) names += "model_" + std::to_string(i) + ",";
  const auto frame = encode_frame({{"type", "hello"}, {"models", names}}, default_max_frame_bytes);
  asio::co_spawn(
      pair.io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer pace(pair.io);
        for (std::size_t at = 0; at < frame.size(); at += 1024) {
          const auto size = std::min<std::size_t>(1024, frame.size() - at);
          co_await asio::async_write(pair.peer, asio::buffer(frame.data() + at, size), asio::use_awaitable);
          pace.expires_after(30ms);
          co_await pace.async_wait(asio::use_awaitable);
        }
      },
      asio::detached);
  pair.io.run_for(20s);
  ASSERT_FALSE(outcome.failure) << "a message still arriving, 1 KB every 30 ms, was taken for the peer's silence";
  ASSERT_TRUE(outcome.message) << "no outcome within 20 s";
  EXPECT_EQ(outcome.message->at("models"), names);
}

// The agent's side of the slow link: its hello leaves slowly, and the
// deadline for the coordinator's answer must not run meanwhile. delivered()
// returns once the peer's TCP has everything, however long that takes while
// bytes move; a peer that takes nothing times it out.
std::string model_names(std::size_t bytes) {
  std::string names;
  for (int i = 0; names.size() < bytes; ++i) names += "model_" + std::to_string(i) + ",";
  return names;
}

TEST(Delivered, AHelloStillLeavingOverASlowLinkIsNotSilence) {
  LoopbackPair pair(4096);
  pair.connection->send({{"type", "hello"}, {"models", model_names(300'000)}});
  std::exception_ptr failure;
  bool delivered = false;
  asio::co_spawn(
      pair.io, [&]() -> asio::awaitable<void> { co_await pair.connection->delivered(100ms); },
      [&](std::exception_ptr error) {
        failure = error;
        delivered = true;
        pair.io.stop();
      });
  std::size_t read = 0;
  asio::co_spawn(  // a slow reader: 8 KB every 20 ms, about a second for the hello
      pair.io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer pace(pair.io);
        std::array<char, 8192> buffer{};
        for (;;) {
          read += co_await pair.peer.async_read_some(asio::buffer(buffer), asio::use_awaitable);
          pace.expires_after(20ms);
          co_await pace.async_wait(asio::use_awaitable);
        }
      },
      asio::detached);
  pair.io.run_for(30s);
  ASSERT_TRUE(delivered) << "not delivered within 30 s";
  EXPECT_FALSE(failure) << "a hello still leaving, 8 KB every 20 ms, was taken for silence";
  EXPECT_GT(read, 250'000u);
}

TEST(Delivered, APeerThatTakesNothingTimesItOut) {
  LoopbackPair pair(4096);
  pair.connection->send({{"type", "hello"}, {"models", model_names(300'000)}});
  std::exception_ptr failure;
  asio::co_spawn(
      pair.io, [&]() -> asio::awaitable<void> { co_await pair.connection->delivered(100ms); },
      [&](std::exception_ptr error) {
        failure = error;
        pair.io.stop();
      });
  pair.io.run_for(5s);
  ASSERT_TRUE(failure) << "a peer that read nothing had the hello delivered";
  try {
    std::rethrow_exception(failure);
  } catch (const boost::system::system_error& error) {
    EXPECT_EQ(error.code(), asio::error::timed_out);
  }
}

}  // namespace
}  // namespace ts::wire
