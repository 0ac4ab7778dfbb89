#include "shared/wire/socket_options.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace ts::wire {

void keep_alive(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds interval) {
  boost::system::error_code ignored;  // best effort: a socket without keepalive still has heartbeats
  socket.set_option(boost::asio::socket_base::keep_alive(true), ignored);
  const int fd = socket.native_handle();
  const int seconds = static_cast<int>(std::max<int64_t>(1, (interval.count() + 999) / 1000));
  const int probes = 3;
  const unsigned int user_timeout_ms = static_cast<unsigned int>(std::max<int64_t>(1000, 3 * interval.count()));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &seconds, sizeof seconds);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &seconds, sizeof seconds);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

}  // namespace ts::wire
