#pragma once
// A completion handler for asio::co_spawn, so that nothing a coroutine
// throws vanishes: the exception is logged with what the coroutine was for
// and rethrown out of io_context::run(), whose caller ends the program
// with an error (a supervisor restarts it). Coroutines that may fail
// without ending the program catch at their own root instead.
#include <exception>
#include <string>

#include "shared/log.hpp"

namespace ts {

inline auto rethrow_from_run(std::string what) {
  return [what = std::move(what)](std::exception_ptr error) {
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& exception) {
      log::error("{} ended: {}", what, exception.what());
    } catch (...) {
      log::error("{} ended with an unknown exception", what);
    }
    std::rethrow_exception(error);
  };
}

}  // namespace ts
