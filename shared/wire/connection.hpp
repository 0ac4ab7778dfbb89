#pragma once
// One framed-JSON connection over TCP, or TLS over TCP (tls.hpp), after
// Boost.Asio's C++20 chat_server: the reader is whoever awaits receive(); a
// single writer coroutine drains a queue woken by a timer, so two writes are
// never in flight; stop() is idempotent and wakes everything.
#include <boost/asio.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "shared/wire/frame.hpp"
#include "shared/wire/tls.hpp"

namespace ts::wire {

namespace asio = boost::asio;

struct ConnectionLimits {
  std::size_t max_frame_bytes = default_max_frame_bytes;
  // Queued outgoing bytes above which the peer is too slow and is dropped.
  std::size_t max_queued_bytes = 64u << 20;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Stream = std::variant<asio::ip::tcp::socket, TlsStream>;

  explicit Connection(asio::ip::tcp::socket socket, ConnectionLimits limits = {});
  // After a finished TLS handshake (tls_accept or tls_connect).
  explicit Connection(TlsStream stream, ConnectionLimits limits = {});

  // Starts the writer coroutine; call once.
  void start();
  // The next message. Throws FrameError on a framing violation and
  // boost::system::system_error when the peer is gone or stop() was called.
  asio::awaitable<nlohmann::json> receive();
  // The next frame's payload, unparsed: for a reader that parses it
  // elsewhere (the coordinator's pool).
  asio::awaitable<std::string> receive_payload();
  // Queues `message`; after stop() it is dropped.
  void send(const nlohmann::json& message);
  // Queues `message`, then closes once everything queued has been written.
  void send_and_close(const nlohmann::json& message);
  void stop();
  // TCP keepalive tuned to the heartbeat `interval` (socket_options.hpp).
  void keep_alive(std::chrono::milliseconds interval);
  bool stopped() const noexcept { return stopped_; }
  const std::string& peer() const noexcept { return peer_; }
  bool encrypted() const noexcept { return std::holds_alternative<TlsStream>(stream_); }
  // Whether the peer sent anything since `mark` (a value of received()):
  // bytes read (each chunk as it arrived, a frame's first bytes too), or
  // bytes waiting in the socket that nobody read yet.
  std::uint64_t received() const noexcept { return received_bytes_; }
  bool heard_since(std::uint64_t mark);
  // Returns once everything queued has been written and acknowledged by the
  // peer's TCP; throws boost::system::system_error (timed_out) after
  // `timeout` in which none of it moved. A hello over a slow link takes as
  // long as it takes: its answer's deadline starts after it (handshake.hpp).
  asio::awaitable<void> delivered(std::chrono::steady_clock::duration timeout);

 private:
  Connection(Stream stream, ConnectionLimits limits);
  asio::awaitable<void> write_loop();
  // Reads or writes all of `buffer`, counting each chunk as it goes: a frame
  // still crossing a slow link is no silence (receive_within).
  asio::awaitable<void> read_counted(asio::mutable_buffer buffer);
  asio::awaitable<void> write_counted(asio::const_buffer buffer);
  asio::ip::tcp::socket& socket();  // under TLS too
  std::size_t unacknowledged();     // bytes in the kernel's send queue

  Stream stream_;
  asio::steady_timer wake_writer_;
  std::deque<std::string> outbox_;
  std::size_t queued_bytes_ = 0;
  std::uint64_t received_bytes_ = 0, sent_bytes_ = 0;
  ConnectionLimits limits_;
  std::string peer_;
  bool closing_ = false;
  bool stopped_ = false;
};

// "ADDRESS:PORT" of the socket's peer, or "unknown".
std::string peer_address(const asio::ip::tcp::socket& socket);

// Reads and validates one message within `timeout`; throws on timeout
// (boost::system::system_error with asio::error::timed_out) or bad input.
// The timeout is the link's silence: a deadline that passes while the
// peer's bytes wait to be read (the event loop was busy), or while bytes
// are still moving either way (a large hello over a slow link), is extended.
asio::awaitable<nlohmann::json> receive_within(Connection& connection, std::chrono::steady_clock::duration timeout);
// The same, unparsed (Connection::receive_payload).
asio::awaitable<std::string> receive_payload_within(Connection& connection,
                                                    std::chrono::steady_clock::duration timeout);

}  // namespace ts::wire
