#include "store/migrations.hpp"

#include <sqlite3.h>

#include <charconv>
#include <filesystem>

#include "shared/embedded_files.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "store/configuration.hpp"

namespace ts::store {

std::vector<Migration> migrations() {
  std::vector<Migration> all;
  constexpr std::string_view prefix = "store/";
  for (const auto& [name, sql] : embedded::files()) {  // ordered by name: 0001_ < 0002_
    if (!name.starts_with(prefix) || !name.ends_with(".sql")) continue;
    const auto file = name.substr(prefix.size());
    int64_t version = 0;
    std::from_chars(file.data(), file.data() + file.size(), version);
    if (version != static_cast<int64_t>(all.size()) + 1) {
      throw std::logic_error("store migrations must be numbered 1, 2, ... without gaps: " + std::string(name));
    }
    all.push_back({version, file, sql});
  }
  return all;
}

int64_t latest_schema_version() { return static_cast<int64_t>(migrations().size()); }

namespace {

InvalidInput newer_schema(const std::string& path, int64_t current, int64_t latest) {
  return InvalidInput("", path + ": store schema version " + std::to_string(current) +
                              " is newer than this torchsweep understands (" + std::to_string(latest) +
                              "); use a newer torchsweep");
}

}  // namespace

void migrate(Database& database, const std::string& path) {
  const auto all = migrations();
  const auto latest = static_cast<int64_t>(all.size());
  // The write lock first, then the version: two processes opening a store
  // at once must not both migrate it.
  Transaction transaction(database);
  const auto current = database.user_version();
  if (current > latest) throw newer_schema(path, current, latest);
  for (const auto& migration : all) {
    if (migration.version <= current) continue;
    log::info("{}: applying store migration {}", path, migration.name);
    database.execute(migration.sql);
  }
  if (current < latest) database.set_user_version(latest);
  // Generated, not migrated: the view follows this torchsweep's list of configuration axes.
  make_config_medians_view(database);
  transaction.commit();
}

Database open_read_only(const std::string& path) {
  if (!std::filesystem::exists(path)) throw InvalidInput("--db", "no store at '" + path + "'");
  Database database(path, Database::Access::read_only);
  const auto latest = latest_schema_version();
  int64_t current = 0;
  try {
    current = database.user_version();
  } catch (const SqliteError& error) {
    // SQLite reads the header first: a file of another kind fails here.
    if (error.code() != SQLITE_NOTADB) throw;
    throw InvalidInput("--db", path + ": not a torchsweep store (SQLite: file is not a database)");
  }
  if (current > latest) throw newer_schema(path, current, latest);
  if (current < latest) {
    throw InvalidInput("--db", path + ": store schema version " + std::to_string(current) +
                                   " is older than this torchsweep's (" + std::to_string(latest) +
                                   "); reading never migrates a store: open it once with this version's "
                                   "`torchsweep coordinator`, which migrates it");
  }
  if (!config_medians_view_is_current(database)) {
    log::warn(
        "{}: its config_medians view was made by another torchsweep and may name configurations otherwise; "
        "opening the store once with this version's `torchsweep coordinator` makes it anew",
        path);
  }
  return database;
}

}  // namespace ts::store
