#include "coordinator/turns.hpp"

namespace ts::coordinator {

namespace asio = boost::asio;

asio::awaitable<void> Turns::run(std::function<void()> work) {
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
      [this, &work](auto handler) {
        queue_.push_back({std::move(work), std::move(handler)});
        schedule();
      },
      asio::use_awaitable);
}

void Turns::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  asio::post(io_, [this] { take_a_turn(); });
}

void Turns::take_a_turn() {
  scheduled_ = false;
  const auto until = std::chrono::steady_clock::now() + budget_;
  do {
    auto entry = std::move(queue_.front());
    queue_.pop_front();
    std::exception_ptr failure;
    try {
      entry.work();
    } catch (...) {
      failure = std::current_exception();
    }
    // Posted: the awaiting session (on this loop) goes on after this turn, not inside it.
    asio::post(io_, [done = std::move(entry.done), failure]() mutable { std::move(done)(failure); });
  } while (!queue_.empty() && std::chrono::steady_clock::now() < until);
  if (!queue_.empty()) schedule();
}

}  // namespace ts::coordinator
