#pragma once
// Group commit for the coordinator's store writes. Under load, committing
// each state change on its own costs more than the change (every commit
// appends to the WAL); a WriteBatch opens one transaction on the first
// write and commits it from a handler posted behind the work already
// queued, so one commit covers every message that was ready. Whatever must
// wait for durability (a result_ack: the agent then deletes its spooled
// copy) runs after that commit. With no load the commit follows at once.
#include <boost/asio.hpp>
#include <functional>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::coordinator {

class WriteBatch {
 public:
  WriteBatch(boost::asio::io_context& io, store::Database& database) : io_(io), database_(database) {}
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;
  ~WriteBatch();

  // Call before writing: opens the batch's transaction if none is open.
  void open();
  // Runs `action` once everything written so far is committed (at once when
  // no batch is open).
  void after_commit(std::function<void()> action);
  // Commits now; throws store::SqliteError if the commit fails. After SQLite
  // rolled the transaction back itself, commits nothing and runs no action.
  void commit();
  // Keeps the batch's transaction open until as many release()s: for writes
  // made in several turns of the loop that must be committed together (a
  // large submission, stored in chunks: readers never see half a sweep).
  // What is written meanwhile, and acknowledged after commit, waits for it.
  void hold();
  void release();

 private:
  boost::asio::io_context& io_;
  store::Database& database_;
  bool open_ = false;
  int holds_ = 0;
  std::vector<std::function<void()>> waiting_;
};

}  // namespace ts::coordinator
