#pragma once
// Orderly shutdown of a long-running mode: on SIGINT or SIGTERM, run `stop`
// (stop accepting, close sessions) and then stop the io_context.
#include <boost/asio.hpp>
#include <functional>

namespace ts::cli {

// The returned signal_set must live as long as `io` runs.
std::unique_ptr<boost::asio::signal_set> stop_on_signals(boost::asio::io_context& io, std::function<void()> stop);

}  // namespace ts::cli
