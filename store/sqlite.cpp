#include "store/sqlite.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <vector>

#include "shared/statistics.hpp"

namespace ts::store {
namespace {

void check(sqlite3* database, int code, std::string_view sql) {
  if (code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE) return;
  throw SqliteError(code, database ? sqlite3_errmsg(database) : sqlite3_errstr(code), std::string(sql));
}

// median(x) and percentile(x, p): aggregates over the non-NULL values, with
// p in [0, 100] as in SQLite's percentile extension; quantiles are type 7
// (numpy's default), the same as shared/statistics.
struct Samples {
  std::vector<double>* values;  // owned; freed in finish (SQLite's aggregate context is raw memory)
  double percent;
};

Samples* samples_of(sqlite3_context* context) {
  return static_cast<Samples*>(sqlite3_aggregate_context(context, sizeof(Samples)));
}

void collect(sqlite3_context* context, sqlite3_value* value, double percent) {
  auto* samples = samples_of(context);
  if (!samples) return sqlite3_result_error_nomem(context);
  if (!samples->values) {
    samples->values = std::make_unique<std::vector<double>>().release();
    samples->percent = percent;
  }
  if (sqlite3_value_type(value) != SQLITE_NULL) samples->values->push_back(sqlite3_value_double(value));
}

void median_step(sqlite3_context* context, int, sqlite3_value** arguments) { collect(context, arguments[0], 50.0); }

void percentile_step(sqlite3_context* context, int, sqlite3_value** arguments) {
  const double percent = sqlite3_value_double(arguments[1]);
  if (sqlite3_value_type(arguments[1]) == SQLITE_NULL || percent < 0.0 || percent > 100.0) {
    return sqlite3_result_error(context, "percentile(x, p): p must be a number between 0 and 100", -1);
  }
  collect(context, arguments[0], percent);
}

void quantile_final(sqlite3_context* context) {
  auto* samples = static_cast<Samples*>(sqlite3_aggregate_context(context, 0));
  if (!samples || !samples->values) return sqlite3_result_null(context);
  const std::unique_ptr<std::vector<double>> values(samples->values);
  if (values->empty()) return sqlite3_result_null(context);
  sqlite3_result_double(context, stats::quantile(*values, samples->percent / 100.0));
}

void register_functions(sqlite3* database) {
  constexpr int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  check(
      database,
      sqlite3_create_function_v2(database, "median", 1, flags, nullptr, nullptr, median_step, quantile_final, nullptr),
      "median()");
  check(database,
        sqlite3_create_function_v2(database, "percentile", 2, flags, nullptr, nullptr, percentile_step, quantile_final,
                                   nullptr),
        "percentile()");
}

}  // namespace

SqliteError::SqliteError(int code, const std::string& message, std::string sql)
    : std::runtime_error("SQLite error " + std::to_string(code) + ": " + message +
                         (sql.empty() ? "" : " [" + sql + "]")),
      code_(code),
      sql_(std::move(sql)) {}

void Database::Closer::operator()(sqlite3* handle) const noexcept { sqlite3_close_v2(handle); }
void Statement::Finalizer::operator()(sqlite3_stmt* handle) const noexcept { sqlite3_finalize(handle); }

Database::Database(const std::string& path, Access access) {
  sqlite3* raw = nullptr;
  const int flags = access == Access::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int code = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  handle_.reset(raw);
  if (code != SQLITE_OK) throw SqliteError(code, raw ? sqlite3_errmsg(raw) : "cannot open", "open " + path);
  sqlite3_busy_timeout(raw, 5000);
  register_functions(raw);
  if (access == Access::read_write) {
    execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
  }
}

Database::~Database() = default;
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

void Database::execute(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int code = sqlite3_exec(handle_.get(), text.c_str(), nullptr, nullptr, &message);
  if (code != SQLITE_OK) {
    const std::string reason = message ? message : sqlite3_errstr(code);
    sqlite3_free(message);
    throw SqliteError(code, reason, text.size() > 200 ? text.substr(0, 200) + "..." : text);
  }
}

Statement Database::prepare(std::string_view sql) { return Statement(handle_.get(), sql); }

int64_t Database::last_insert_rowid() const noexcept { return sqlite3_last_insert_rowid(handle_.get()); }

bool Database::in_transaction() const noexcept { return sqlite3_get_autocommit(handle_.get()) == 0; }

int64_t Database::user_version() {
  auto statement = prepare("PRAGMA user_version");
  statement.step();
  return statement.integer(0);
}

void Database::set_user_version(int64_t version) { execute("PRAGMA user_version = " + std::to_string(version)); }

Statement::Statement(sqlite3* database, std::string_view sql) : database_(database), sql_(sql) {
  sqlite3_stmt* raw = nullptr;
  const int code = sqlite3_prepare_v2(database, sql_.c_str(), static_cast<int>(sql_.size()), &raw, nullptr);
  handle_.reset(raw);
  check(database, code, sql_);
}

Statement::~Statement() = default;
Statement::Statement(Statement&&) noexcept = default;
Statement& Statement::operator=(Statement&&) noexcept = default;

Statement& Statement::bind(int index, int64_t value) {
  check(database_, sqlite3_bind_int64(handle_.get(), index, value), sql_);
  return *this;
}
Statement& Statement::bind(int index, double value) {
  check(database_, sqlite3_bind_double(handle_.get(), index, value), sql_);
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  check(database_,
        sqlite3_bind_text(handle_.get(), index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT), sql_);
  return *this;
}
int Statement::parameter(const std::string& name) const {
  const int index = sqlite3_bind_parameter_index(handle_.get(), name.c_str());
  if (index == 0) throw std::out_of_range("no parameter " + name + " in: " + sql_);
  return index;
}

Statement& Statement::bind(int index, std::nullptr_t) {
  check(database_, sqlite3_bind_null(handle_.get(), index), sql_);
  return *this;
}

bool Statement::step() {
  const int code = sqlite3_step(handle_.get());
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  const SqliteError error(code, sqlite3_errmsg(database_), sql_);
  sqlite3_reset(handle_.get());
  throw error;
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(handle_.get());
  sqlite3_clear_bindings(handle_.get());
}

int64_t Statement::changes() const { return sqlite3_changes64(database_); }
int Statement::columns() const { return sqlite3_column_count(handle_.get()); }
bool Statement::is_null(int column) const { return sqlite3_column_type(handle_.get(), column) == SQLITE_NULL; }
int64_t Statement::integer(int column) const { return sqlite3_column_int64(handle_.get(), column); }
double Statement::real(int column) const { return sqlite3_column_double(handle_.get(), column); }
std::string Statement::text(int column) const {
  const auto* bytes = sqlite3_column_text(handle_.get(), column);
  return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                             static_cast<std::size_t>(sqlite3_column_bytes(handle_.get(), column)))
               : std::string();
}
std::string_view Statement::text_view(int column) const {
  const auto* bytes = sqlite3_column_text(handle_.get(), column);
  return bytes ? std::string_view(reinterpret_cast<const char*>(bytes),
                                  static_cast<std::size_t>(sqlite3_column_bytes(handle_.get(), column)))
               : std::string_view();
}

std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional(real(column));
}

Transaction::Transaction(Database& database)
    : database_(database), nested_(sqlite3_get_autocommit(database.handle()) == 0) {
  database_.execute(nested_ ? "SAVEPOINT ts_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  try {
    database_.execute(nested_ ? "ROLLBACK TO ts_nested; RELEASE ts_nested" : "ROLLBACK");
  } catch (const SqliteError&) {
    // Nothing to roll back any more (SQLite already did on a fatal error).
  }
}

void Transaction::commit() {
  if (done_) throw std::logic_error("transaction committed twice");
  database_.execute(nested_ ? "RELEASE ts_nested" : "COMMIT");
  done_ = true;
}

}  // namespace ts::store
