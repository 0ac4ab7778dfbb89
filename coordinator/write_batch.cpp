#include "coordinator/write_batch.hpp"

#include "shared/log.hpp"

namespace ts::coordinator {

WriteBatch::~WriteBatch() {
  if (!open_) return;
  try {
    commit();
  } catch (const std::exception& error) {
    log::error("store: the last batch of writes could not be committed: {}", error.what());
  }
}

void WriteBatch::open() {
  if (open_) return;
  database_.execute("BEGIN IMMEDIATE");
  open_ = true;
  boost::asio::post(io_, [this] {
    if (open_ && holds_ == 0) commit();
  });
}

void WriteBatch::hold() {
  open();
  ++holds_;
}

void WriteBatch::release() {
  if (holds_ == 0 || --holds_ > 0) return;
  boost::asio::post(io_, [this] {
    if (open_ && holds_ == 0) commit();
  });
}

void WriteBatch::after_commit(std::function<void()> action) {
  if (!open_) return action();
  waiting_.push_back(std::move(action));
}

void WriteBatch::commit() {
  if (!open_) return;
  // A COMMIT that fails is its caller's error, reported once: never tried again.
  open_ = false;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  // SQLite rolls the transaction back itself on some errors (a full disk):
  // the write that failed threw already, and nothing is left to commit or
  // to acknowledge.
  if (!database_.in_transaction()) return;
  database_.execute("COMMIT");
  for (auto& action : waiting) action();
}

}  // namespace ts::coordinator
