#pragma once
// The schema as numbered migrations (schemas/store/NNNN_name.sql, embedded).
// PRAGMA user_version is the number of the last one applied.
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite.hpp"

namespace ts::store {

struct Migration {
  int64_t version;
  std::string_view name;
  std::string_view sql;
};

// The embedded migrations, in order; their numbers are 1, 2, ... without gaps.
std::vector<Migration> migrations();
int64_t latest_schema_version();

// Brings `database` to the latest version, every pending migration in one
// transaction (all or nothing) taken before the version is read. A store
// newer than this build is refused with ts::InvalidInput, untouched.
void migrate(Database& database, const std::string& path);

// The store at `path` for commands that only read (query, export): opened
// read-only, never created or migrated. Throws ts::InvalidInput naming
// --db when there is no store there or its schema is older or newer than
// this build's.
Database open_read_only(const std::string& path);

}  // namespace ts::store
