#pragma once
// Small RAII types over SQLite (after SQLiteCpp): a Database owns a
// connection, a Statement is prepared once and reused, a Transaction rolls
// back in its destructor unless committed. sqlite3.h stays out of here.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace ts::store {

// An SQLite failure, with its result code and the SQL that caused it.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message, std::string sql);
  int code() const noexcept { return code_; }
  const std::string& sql() const noexcept { return sql_; }

 private:
  int code_;
  std::string sql_;
};

class Statement;

class Database {
 public:
  enum class Access { read_write, read_only };
  // Opens with a busy timeout and torchsweep's SQL functions median() and
  // percentile(). read_write creates the file if needed and sets WAL
  // journaling and foreign keys; read_only never writes (SQLite refuses).
  explicit Database(const std::string& path, Access access = Access::read_write);
  ~Database();
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;

  // Runs one or more statements without parameters.
  void execute(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t user_version();
  void set_user_version(int64_t version);
  // Whether a transaction is open (false after SQLite rolled one back itself).
  // The rowid of the last row this connection inserted.
  int64_t last_insert_rowid() const noexcept;
  bool in_transaction() const noexcept;
  sqlite3* handle() const noexcept { return handle_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* handle) const noexcept;
  };
  std::unique_ptr<sqlite3, Closer> handle_;
};

class Statement {
 public:
  Statement(sqlite3* database, std::string_view sql);
  ~Statement();
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) noexcept;

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::nullptr_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, nullptr);
  }
  // The index of the named parameter (":name" in the SQL); throws
  // std::out_of_range when the statement has none of that name.
  int parameter(const std::string& name) const;
  template <class... Values>
  Statement& bind_all(const Values&... values) {
    int index = 0;
    (bind(++index, values), ...);
    return *this;
  }

  // Steps once; true while a row is available.
  bool step();
  // Steps to completion and resets, keeping the bindings' slots for reuse.
  void run();
  void reset();
  // Rows changed by the last run of this statement's connection.
  int64_t changes() const;

  int columns() const;  // of the current row
  bool is_null(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  // The text of a column without a copy; valid until the next step().
  std::string_view text_view(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* handle) const noexcept;
  };
  sqlite3* database_;
  std::unique_ptr<sqlite3_stmt, Finalizer> handle_;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (the single writer takes the write lock
// at once); ROLLBACK on destruction unless commit() ran. Inside an open
// transaction it is a savepoint instead: commit() releases it into the
// outer transaction, destruction rolls back only its own changes.
class Transaction {
 public:
  explicit Transaction(Database& database);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // Throws std::logic_error when called twice.
  void commit();

 private:
  Database& database_;
  bool nested_;
  bool done_ = false;
};

}  // namespace ts::store
