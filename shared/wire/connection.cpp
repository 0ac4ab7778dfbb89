#include "shared/wire/connection.hpp"

#include <boost/asio/experimental/parallel_group.hpp>

#include "shared/log.hpp"
#include "shared/wire/socket_options.hpp"

namespace ts::wire {

using asio::use_awaitable;

namespace {

// Reads or writes all of `buffer` on whichever stream the connection has.
template <class Buffer>
asio::awaitable<std::size_t> read_all(Connection::Stream& stream, Buffer buffer) {
  return std::visit([&](auto& s) { return asio::async_read(s, buffer, use_awaitable); }, stream);
}
template <class Buffer>
asio::awaitable<std::size_t> write_all(Connection::Stream& stream, Buffer buffer) {
  return std::visit([&](auto& s) { return asio::async_write(s, buffer, use_awaitable); }, stream);
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, ConnectionLimits limits)
    : Connection(Stream(std::move(socket)), limits) {}

Connection::Connection(TlsStream stream, ConnectionLimits limits)
    : Connection(Stream(std::in_place_type<TlsStream>, std::move(stream)), limits) {}

Connection::Connection(Stream stream, ConnectionLimits limits)
    : stream_(std::move(stream)),
      wake_writer_(socket().get_executor()),
      limits_(limits),
      peer_(peer_address(socket())) {
  wake_writer_.expires_at(asio::steady_timer::time_point::max());
}

void Connection::keep_alive(std::chrono::milliseconds interval) { wire::keep_alive(socket(), interval); }

std::string peer_address(const asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  const auto remote = socket.remote_endpoint(error);
  return error ? "unknown" : remote.address().to_string() + ":" + std::to_string(remote.port());
}

asio::ip::tcp::socket& Connection::socket() {
  return std::visit(
      [](auto& s) -> asio::ip::tcp::socket& {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, TlsStream>) {
          return s.next_layer();
        } else {
          return s;
        }
      },
      stream_);
}

void Connection::start() {
  asio::co_spawn(
      socket().get_executor(), [self = shared_from_this()] { return self->write_loop(); }, asio::detached);
}

asio::awaitable<nlohmann::json> Connection::receive() {
  FrameHeader header{};
  received_bytes_ += co_await read_all(stream_, asio::buffer(header));
  std::string payload(payload_length(header, limits_.max_frame_bytes), '\0');
  received_bytes_ += co_await read_all(stream_, asio::buffer(payload));
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
  socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
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
      co_await write_all(stream_, asio::buffer(outbox_.front()));
      queued_bytes_ -= outbox_.front().size();
      outbox_.pop_front();
    }
  } catch (const boost::system::system_error&) {
    // The peer went away: the reader sees it too and ends the session.
  }
  stop();
}

bool Connection::heard_since(std::uint64_t mark) {
  boost::system::error_code error;
  return received_bytes_ != mark || socket().available(error) > 0;
}

namespace {

// Returns once the peer has been silent for `timeout`. A deadline that passes
// while its bytes wait unread, or after it sent some, starts a new one: a
// coordinator whose loop was busy for longer than the timeout must not take
// a heartbeat waiting in the socket for the peer's silence.
asio::awaitable<void> silence(Connection& connection, std::chrono::steady_clock::duration timeout) {
  asio::steady_timer deadline(co_await asio::this_coro::executor);
  for (auto mark = connection.received();; mark = connection.received()) {
    deadline.expires_after(timeout);
    co_await deadline.async_wait(use_awaitable);
    if (!connection.heard_since(mark)) co_return;
  }
}

}  // namespace

asio::awaitable<nlohmann::json> receive_within(Connection& connection, std::chrono::steady_clock::duration timeout) {
  // wait_for_one, not the || operator: || waits for the first *success*, so a
  // bad frame or a closed peer would only be noticed at the deadline.
  const auto executor = co_await asio::this_coro::executor;
  auto [order, failure, message, silence_ended] =
      co_await asio::experimental::make_parallel_group(
          asio::co_spawn(executor, connection.receive(), asio::deferred),
          asio::co_spawn(executor, silence(connection, timeout), asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), use_awaitable);
  if (order[0] == 1) throw boost::system::system_error(asio::error::timed_out);
  if (failure) std::rethrow_exception(failure);
  co_return std::move(message);
}

}  // namespace ts::wire
