#include "shared/wire/connection.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <boost/asio/experimental/parallel_group.hpp>

#include "shared/log.hpp"
#include "shared/wire/socket_options.hpp"

namespace ts::wire {

using asio::use_awaitable;

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

asio::awaitable<void> Connection::read_counted(asio::mutable_buffer buffer) {
  while (buffer.size() > 0) {
    const auto read = co_await std::visit([&](auto& s) { return s.async_read_some(buffer, use_awaitable); }, stream_);
    received_bytes_ += read;
    buffer += read;
  }
}

asio::awaitable<void> Connection::write_counted(asio::const_buffer buffer) {
  while (buffer.size() > 0) {
    const auto written =
        co_await std::visit([&](auto& s) { return s.async_write_some(buffer, use_awaitable); }, stream_);
    sent_bytes_ += written;
    buffer += written;
  }
}

asio::awaitable<std::string> Connection::receive_payload() {
  FrameHeader header{};
  co_await read_counted(asio::buffer(header));
  std::string payload(payload_length(header, limits_.max_frame_bytes), '\0');
  co_await read_counted(asio::buffer(payload));
  co_return payload;
}

asio::awaitable<nlohmann::json> Connection::receive() { co_return decode_payload(co_await receive_payload()); }

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
      co_await write_counted(asio::buffer(outbox_.front()));
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

std::size_t Connection::unacknowledged() {
  int bytes = 0;  // in the kernel's send queue: not yet acknowledged by the peer's TCP
  return ::ioctl(socket().native_handle(), SIOCOUTQ, &bytes) == 0 ? static_cast<std::size_t>(bytes) : 0;
}

asio::awaitable<void> Connection::delivered(std::chrono::steady_clock::duration timeout) {
  // Polled: the kernel tells no one when the peer acknowledges. The tick
  // starts at 1 ms (a local peer has it all at once: a CLI command pays
  // about that) and doubles up to a tenth of the timeout, at most 100 ms.
  const auto longest = std::min<std::chrono::steady_clock::duration>(timeout / 10, std::chrono::milliseconds(100));
  std::chrono::steady_clock::duration tick = std::chrono::milliseconds(1);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  auto moved_at = std::chrono::steady_clock::now();
  auto progress = std::pair(sent_bytes_, unacknowledged());
  while (!stopped_ && (queued_bytes_ > 0 || unacknowledged() > 0)) {
    timer.expires_after(tick);
    co_await timer.async_wait(use_awaitable);
    tick = std::min(2 * tick, longest);
    const auto now_progress = std::pair(sent_bytes_, unacknowledged());
    if (now_progress.first != progress.first || now_progress.second < progress.second) {
      moved_at = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - moved_at >= timeout) {
      throw boost::system::system_error(asio::error::timed_out);
    }
    progress = now_progress;
  }
}

namespace {

// Returns once the peer has been silent for `timeout`. A deadline that passes
// while its bytes wait unread, or after it sent some (a frame's first bytes
// too), starts a new one: a coordinator whose loop was busy for longer than
// the timeout must not take a heartbeat waiting in the socket for the peer's
// silence, nor a hello still arriving over a slow link.
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
  co_return decode_payload(co_await receive_payload_within(connection, timeout));
}

asio::awaitable<std::string> receive_payload_within(Connection& connection,
                                                    std::chrono::steady_clock::duration timeout) {
  // wait_for_one, not the || operator: || waits for the first *success*, so a
  // bad frame or a closed peer would only be noticed at the deadline.
  const auto executor = co_await asio::this_coro::executor;
  auto [order, failure, message, silence_ended] =
      co_await asio::experimental::make_parallel_group(
          asio::co_spawn(executor, connection.receive_payload(), asio::deferred),
          asio::co_spawn(executor, silence(connection, timeout), asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), use_awaitable);
  if (order[0] == 1) throw boost::system::system_error(asio::error::timed_out);
  if (failure) std::rethrow_exception(failure);
  co_return std::move(message);
}

}  // namespace ts::wire
