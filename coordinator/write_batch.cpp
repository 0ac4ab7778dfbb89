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
    if (open_) commit();
  });
}

void WriteBatch::after_commit(std::function<void()> action) {
  if (!open_) return action();
  waiting_.push_back(std::move(action));
}

void WriteBatch::commit() {
  if (!open_) return;
  database_.execute("COMMIT");
  open_ = false;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& action : waiting) action();
}

}  // namespace ts::coordinator
