#pragma once
// TCP keepalive tuned to the heartbeat: a peer that vanished without a word
// (a partition, a powered-off node) is noticed within a few heartbeat
// intervals instead of after TCP's retransmission timeout (~15 minutes).
#include <boost/asio.hpp>
#include <chrono>

namespace ts::wire {

// Probes after `interval` of silence, every `interval`, 3 unanswered probes
// (or data unacknowledged for 3 intervals) end the connection.
void keep_alive(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds interval);

}  // namespace ts::wire
