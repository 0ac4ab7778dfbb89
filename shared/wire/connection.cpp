#include "shared/wire/connection.hpp"

#include <boost/asio/experimental/parallel_group.hpp>

#include "shared/log.hpp"

namespace ts::wire {

using asio::use_awaitable;

Connection::Connection(asio::ip::tcp::socket socket, ConnectionLimits limits)
    : socket_(std::move(socket)), wake_writer_(socket_.get_executor()), limits_(limits) {
  wake_writer_.expires_at(asio::steady_timer::time_point::max());
  boost::system::error_code error;
  const auto remote = socket_.remote_endpoint(error);
  peer_ = error ? "unknown" : remote.address().to_string() + ":" + std::to_string(remote.port());
}

void Connection::start() {
  asio::co_spawn(
      socket_.get_executor(), [self = shared_from_this()] { return self->write_loop(); }, asio::detached);
}

asio::awaitable<nlohmann::json> Connection::receive() {
  FrameHeader header{};
  co_await asio::async_read(socket_, asio::buffer(header), use_awaitable);
  std::string payload(payload_length(header, limits_.max_frame_bytes), '\0');
  co_await asio::async_read(socket_, asio::buffer(payload), use_awaitable);
  co_return decode_payload(payload);
}

void Connection::send(const nlohmann::json& message) {
  if (stopped_ || closing_) return;
  auto frame = encode_frame(message, limits_.max_frame_bytes);
  queued_bytes_ += frame.size();
  if (queued_bytes_ > limits_.max_queued_bytes) {
    log::warn("{}: peer reads too slowly ({} bytes queued); closing", peer_, queued_bytes_);
    stop();
    return;
  }
  outbox_.push_back(std::move(frame));
  wake_writer_.cancel_one();
}

void Connection::send_and_close(const nlohmann::json& message) {
  send(message);
  closing_ = true;
  wake_writer_.cancel_one();
}

void Connection::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  wake_writer_.cancel();
}

asio::awaitable<void> Connection::write_loop() {
  try {
    while (!stopped_) {
      if (outbox_.empty()) {
        if (closing_) break;
        boost::system::error_code woken;
        co_await wake_writer_.async_wait(asio::redirect_error(use_awaitable, woken));
        continue;
      }
      co_await asio::async_write(socket_, asio::buffer(outbox_.front()), use_awaitable);
      queued_bytes_ -= outbox_.front().size();
      outbox_.pop_front();
    }
  } catch (const boost::system::system_error&) {
    // The peer went away: the reader sees it too and ends the session.
  }
  stop();
}

asio::awaitable<nlohmann::json> receive_within(Connection& connection, std::chrono::steady_clock::duration timeout) {
  // wait_for_one, not the || operator: || waits for the first *success*, so a
  // bad frame or a closed peer would only be noticed at the deadline.
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer deadline(executor, timeout);
  auto [order, failure, message, timer_error] =
      co_await asio::experimental::make_parallel_group(asio::co_spawn(executor, connection.receive(), asio::deferred),
                                                       deadline.async_wait(asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), use_awaitable);
  if (order[0] == 1) throw boost::system::system_error(asio::error::timed_out);
  if (failure) std::rethrow_exception(failure);
  co_return std::move(message);
}

}  // namespace ts::wire
