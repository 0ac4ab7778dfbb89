#pragma once
// Work that must run on the event loop (the store's one writer, the job
// registry) but may arrive in floods: 5,000 agents' results at once. Run as
// each arrived, they would hold the loop for seconds, and every heartbeat,
// dispatch and timer behind them would wait as long. Turns queues them in
// arrival order and runs them in turns of at most `budget`, posting itself
// behind whatever else is ready between turns; the caller awaits its own
// work's end, so one peer's messages keep their order.
#include <boost/asio.hpp>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>

namespace ts::coordinator {

class Turns {
 public:
  Turns(boost::asio::io_context& io, std::chrono::microseconds budget) : io_(io), budget_(budget) {}
  Turns(const Turns&) = delete;
  Turns& operator=(const Turns&) = delete;

  // Runs `work` on the loop after the work queued before it; rethrows what
  // it threw. Call from a coroutine on the loop.
  boost::asio::awaitable<void> run(std::function<void()> work);

 private:
  struct Entry {
    std::function<void()> work;
    boost::asio::any_completion_handler<void(std::exception_ptr)> done;
  };
  void schedule();
  void take_a_turn();

  boost::asio::io_context& io_;
  std::chrono::microseconds budget_;
  std::deque<Entry> queue_;
  bool scheduled_ = false;
};

}  // namespace ts::coordinator
