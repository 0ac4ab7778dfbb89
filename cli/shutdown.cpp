#include "cli/shutdown.hpp"

#include "shared/log.hpp"

namespace ts::cli {

std::unique_ptr<boost::asio::signal_set> stop_on_signals(boost::asio::io_context& io, std::function<void()> stop) {
  auto signals = std::make_unique<boost::asio::signal_set>(io, SIGINT, SIGTERM);
  signals->async_wait([&io, stop = std::move(stop)](const boost::system::error_code& error, int signal) {
    if (error) return;
    log::info("signal {}: shutting down", signal);
    stop();
    io.stop();
  });
  return signals;
}

}  // namespace ts::cli
