#pragma once
// What the coordinator benchmarks read of a real `torchsweep coordinator`
// process: one client request on a fresh connection, its CPU time and
// memory from /proc, and a Prometheus series from its /metrics.
#include <sys/types.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "shared/wire/connection.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::bench {

// One request on a fresh client connection.
inline boost::asio::awaitable<nlohmann::json> request(boost::asio::io_context& io, uint16_t port,
                                                      nlohmann::json message) {
  boost::asio::ip::tcp::socket socket(io);
  co_await socket.async_connect({boost::asio::ip::make_address("127.0.0.1"), port}, boost::asio::use_awaitable);
  auto connection = std::make_shared<wire::Connection>(std::move(socket));
  connection->start();
  connection->send(wire::make_message("hello", {{"role", "client"}, {"name", "bench"}, {"version", "bench"}}));
  connection->send(message);
  co_await connection->receive();  // welcome
  auto reply = co_await connection->receive();
  connection->stop();
  co_return reply;
}

// A /proc/PID/status figure in KiB (VmRSS, VmHWM), or -1.
inline long status_kib(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  long value = 0;
  while (status >> word) {
    if (word == key + ":") {
      status >> value;
      return value;
    }
  }
  return -1;
}

// User + system CPU seconds the process has used.
inline double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string field;
  for (int i = 1; i <= 13 && stat >> field; ++i) {
  }
  long user = 0, system = 0;
  stat >> user >> system;
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The value of an unlabelled series `name` in the coordinator's /metrics, or -1.
inline double scrape(uint16_t port, const std::string& name) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  const std::string get = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(get));
  std::string body;
  boost::system::error_code end;
  boost::asio::read(socket, boost::asio::dynamic_buffer(body), end);  // HTTP/1.0: until the server closes
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + " ")) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

}  // namespace ts::bench
