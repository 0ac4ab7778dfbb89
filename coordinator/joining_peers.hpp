#pragma once
// Connections whose hello has not arrived yet. An agent joining over a slow
// link (a hello of model lists at a few KB/s takes a minute) is not silent
// and is not timed out (shared/wire/connection.hpp, receive_within); until
// it has said who it is, `status` shows it by address, how long it has been
// joining and the bytes received so far (docs/protocol.md).
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "shared/wire/connection.hpp"

namespace ts::coordinator {

// Added and removed by the session's hello stage explicitly, not by a
// guard's destructor: a coroutine frame destroyed with the io_context after
// the coordinator must not touch it (coordinator.cpp, serve).
class JoiningPeers {
 public:
  void add(const wire::Connection& connection);
  void remove(const wire::Connection& connection);  // idempotent

  // [{address, joining_s, received_bytes}], the longest joining first.
  nlohmann::json describe(std::chrono::steady_clock::time_point now) const;

 private:
  std::map<const wire::Connection*, std::chrono::steady_clock::time_point> since_;
};

}  // namespace ts::coordinator
