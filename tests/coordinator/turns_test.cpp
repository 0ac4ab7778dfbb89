#include "coordinator/turns.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::coordinator {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Three peers' work queued at once; the first posts a handler of its own
// (another peer's heartbeat, a timer) when it runs: where that handler runs
// among the work is where the loop was free.
std::vector<std::string> order_with_budget(std::chrono::microseconds budget) {
  asio::io_context io;
  Turns turns(io, budget);
  std::vector<std::string> order;
  for (int peer = 1; peer <= 3; ++peer) {
    asio::co_spawn(
        io,
        [&, peer]() -> asio::awaitable<void> {
          co_await turns.run([&, peer] {
            order.push_back(std::to_string(peer));
            if (peer == 1) asio::post(io, [&] { order.push_back("other"); });
          });
          order.push_back("after " + std::to_string(peer));
        },
        asio::detached);
  }
  io.run();
  return order;
}

TEST(Turns, AFloodOfWorkLetsTheLoopServeOthersBetweenTurnsAndKeepsItsOrder) {
  // A turn of no budget runs one piece of work: what was posted meanwhile goes before the next.
  const auto one_at_a_time = order_with_budget(0us);
  const std::vector<std::string> work_only = [&] {
    std::vector<std::string> only;
    for (const auto& step : one_at_a_time)
      if (step.size() == 1) only.push_back(step);
    return only;
  }();
  EXPECT_EQ(work_only, (std::vector<std::string>{"1", "2", "3"}));
  const auto at = [&](const std::string& step) {
    return std::find(one_at_a_time.begin(), one_at_a_time.end(), step) - one_at_a_time.begin();
  };
  EXPECT_LT(at("other"), at("2"));
  // With room in the turn, the whole queue runs before anything else; each peer goes on after it.
  EXPECT_EQ(order_with_budget(1s), (std::vector<std::string>{"1", "2", "3", "other", "after 1", "after 2", "after 3"}));
}

TEST(Turns, WhatTheWorkThrowsReachesItsCallerAndTheQueueGoesOn) {
  asio::io_context io;
  Turns turns(io, 1s);
  std::string caught, later;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          co_await turns.run([] { throw std::runtime_error("the store failed"); });
        } catch (const std::runtime_error& error) {
          caught = error.what();
        }
      },
      asio::detached);
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { co_await turns.run([&] { later = "ran"; }); }, asio::detached);
  io.run();
  EXPECT_EQ(caught, "the store failed");
  EXPECT_EQ(later, "ran");
}

}  // namespace
}  // namespace ts::coordinator
