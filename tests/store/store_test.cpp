#include "store/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "shared/errors.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/migrations.hpp"

namespace ts::store {
namespace {

using simulation::all_judged;
using simulation::judged;
using simulation::make_result;
using simulation::SyntheticResult;

int64_t count(Database& database, const std::string& table) {
  auto statement = database.prepare("SELECT COUNT(*) FROM " + table);
  statement.step();
  return statement.integer(0);
}

// A store opened (so migrated) at `path`, read by `sql`: its first column's
// value -> its second's, null as none.
std::map<std::string, std::optional<std::string>> migrated_texts(const std::string& path, const std::string& sql) {
  Store store(path);
  auto rows = store.database().prepare(sql);
  std::map<std::string, std::optional<std::string>> texts;
  while (rows.step()) texts[rows.text(0)] = rows.is_null(1) ? std::nullopt : std::optional(rows.text(1));
  return texts;
}

class StoreFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("ts_store_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  std::string path_;
};

TEST_F(StoreFile, FreshStoreGetsTheLatestSchemaInWalMode) {
  Store store(path_);
  EXPECT_EQ(store.database().user_version(), latest_schema_version());
  auto mode = store.database().prepare("PRAGMA journal_mode");
  mode.step();
  EXPECT_EQ(mode.text(0), "wal");
  auto keys = store.database().prepare("PRAGMA foreign_keys");
  keys.step();
  EXPECT_EQ(keys.integer(0), 1);
  EXPECT_EQ(count(store.database(), "results"), 0);
}

TEST_F(StoreFile, ReopeningDoesNotMigrateAgain) {
  {
    Store store(path_);
    store.ingest_result(judged(make_result({})), "a");
  }
  Store again(path_);
  EXPECT_EQ(count(again.database(), "results"), 1);
}

TEST_F(StoreFile, NewerStoreIsRefusedAndLeftUntouched) {
  {
    Database database(path_);
    database.set_user_version(latest_schema_version() + 1);
  }
  EXPECT_THROW(Store{path_}, InvalidInput);
  Database database(path_);
  EXPECT_EQ(database.user_version(), latest_schema_version() + 1);
  auto tables = database.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
  tables.step();
  EXPECT_EQ(tables.integer(0), 0);
}

TEST_F(StoreFile, OlderStoreIsUpgradedKeepingItsData) {
  {
    Database database(path_);  // version 0: a file someone made before the schema existed
    database.execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me')");
  }
  Store store(path_);
  EXPECT_EQ(store.database().user_version(), latest_schema_version());
  EXPECT_EQ(count(store.database(), "notes"), 1);
}

TEST_F(StoreFile, ReadersOpenReadOnlyAndRefuseStoresOfAnotherSchemaWithoutMigrating) {
  EXPECT_THROW(open_read_only(path_), InvalidInput);  // no store there: none is created
  EXPECT_FALSE(std::filesystem::exists(path_));
  {
    Database database(path_);
    database.execute("CREATE TABLE notes (text TEXT)");
  }
  try {
    open_read_only(path_);
    ADD_FAILURE() << "an unmigrated store was opened for reading";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("is older than this torchsweep's"), std::string::npos) << error.what();
  }
  EXPECT_EQ(Database(path_).user_version(), 0);  // not migrated
  { Database(path_).set_user_version(latest_schema_version() + 1); }
  EXPECT_THROW(open_read_only(path_), InvalidInput);
  { Database(path_).set_user_version(0); }
  { Store migrated(path_); }
  auto reader = open_read_only(path_);
  EXPECT_EQ(count(reader, "results"), 0);
  EXPECT_THROW(reader.execute("INSERT INTO notes VALUES ('no')"), SqliteError);
}

TEST_F(StoreFile, AFileOfAnotherKindIsRefusedNamingIt) {
  {
    std::ofstream notes(path_);
    for (int line = 0; line < 100; ++line) notes << "not a database\n";
  }
  try {
    open_read_only(path_);
    ADD_FAILURE() << "a text file was opened as a store";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "--db");
    EXPECT_NE(std::string(error.what()).find(path_ + ": not a torchsweep store"), std::string::npos) << error.what();
  }
}

TEST_F(StoreFile, Version1StoreKeepsItsStepTimesThroughMigration2) {
  {
    Database database(path_);
    database.execute(migrations().at(0).sql);
    database.set_user_version(1);
    database.execute(
        "INSERT INTO results (job_id, attempt, status, model, task, batch_size, precision, mode, runner, gpus, "
        "device_name, torch_version, host, document, received_at) VALUES ('j', 1, 'ok', 'mlp', 'train', 8, 'fp32', "
        "'eager', 'libtorch', 1, 'cpu', '2.6.0', 'h', '{}', 'now');"
        "INSERT INTO result_epochs VALUES ('j', 1, 0, 0.3), ('j', 1, 1, 0.5);"
        "INSERT INTO result_steps VALUES ('j', 1, 0, 1, 0.2), ('j', 1, 0, 0, 0.1), ('j', 1, 1, 0, 0.5);");
  }
  Store store(path_);
  EXPECT_EQ(store.database().user_version(), latest_schema_version());
  auto epochs = store.database().prepare("SELECT step_seconds FROM result_epochs ORDER BY epoch");
  ASSERT_TRUE(epochs.step());
  EXPECT_EQ(epochs.text(0), "[0.1,0.2]");
  ASSERT_TRUE(epochs.step());
  EXPECT_EQ(epochs.text(0), "[0.5]");
  auto steps = store.database().prepare("SELECT epoch, step, seconds FROM result_steps ORDER BY epoch, step");
  std::vector<std::tuple<int64_t, int64_t, double>> rows;
  while (steps.step()) rows.emplace_back(steps.integer(0), steps.integer(1), steps.real(2));
  EXPECT_EQ(rows, (std::vector<std::tuple<int64_t, int64_t, double>>{{0, 0, 0.1}, {0, 1, 0.2}, {1, 0, 0.5}}));
}

TEST_F(StoreFile, Migration10GivesTheLanguageModelsStoredBeforeItTheirTokensPerSecond) {
  {
    Database database(path_);
    for (std::size_t i = 0; i < 9; ++i) database.execute(migrations().at(i).sql);
    database.set_user_version(9);
    database.execute(
        "INSERT INTO results (job_id, attempt, status, model, task, batch_size, precision, mode, runner, gpus, "
        "device_name, torch_version, host, received_at, samples_per_s) VALUES "
        "('lm', 1, 'ok', 'gpt', 'train', 8, 'fp32', 'eager', 'libtorch', 1, 'cpu', '2.6.0', 'h', 'now', 10.0), "
        "('hf', 1, 'ok', 'hf:gpt2', 'train', 8, 'fp32', 'eager', 'torch-compile', 1, 'cpu', '2.6.0', 'h', 'now', 2.0), "
        "('mlp', 1, 'ok', 'mlp', 'train', 8, 'fp32', 'eager', 'libtorch', 1, 'cpu', '2.6.0', 'h', 'now', 99.0);"
        "INSERT INTO result_documents (job_id, attempt, document) VALUES "
        "('lm', 1, '{\"job\": {\"seq_len\": 64}}'), ('hf', 1, '{\"job\": {\"seq_len\": 128}}'), "
        "('mlp', 1, '{\"job\": {}}');");
  }
  Store store(path_);
  auto rows = store.database().prepare("SELECT job_id, tokens_per_s FROM results ORDER BY job_id");
  std::map<std::string, std::optional<double>> tokens;
  while (rows.step()) {
    tokens[rows.text(0)] = rows.is_null(1) ? std::nullopt : std::optional<double>(rows.real(1));
  }
  EXPECT_EQ(tokens.at("lm"), 640.0);
  EXPECT_EQ(tokens.at("hf"), 256.0);
  EXPECT_EQ(tokens.at("mlp"), std::nullopt);
}

// A paired sweep's jobs stored before migration 19 get the pair key the
// coordinator now stores (sweep::pair_key: the configuration less
// pairing.by, compact JSON with sorted keys); an unpaired sweep's none.
TEST_F(StoreFile, Migration19GivesThePairedJobsStoredBeforeItTheirPairKey) {
  {
    Database database(path_);
    for (std::size_t i = 0; i < 18; ++i) database.execute(migrations().at(i).sql);
    database.set_user_version(18);
    database.execute(
        "INSERT INTO sweeps (sweep_id, name, spec, created_at) VALUES "
        "('paired', 'p', '{\"pairing\": {\"by\": \"mode\"}}', 'now'), ('plain', 'q', '{}', 'now');"
        "INSERT INTO jobs (job_id, sweep_id, ordinal, config_key, document, created_at) VALUES "
        "('p/0', 'paired', 0, '{\"batch_size\":8,\"mode\":\"eager\",\"model\":\"mlp\"}', '{}', 'now'), "
        "('p/1', 'paired', 1, '{\"batch_size\":8,\"mode\":\"compiled\",\"model\":\"mlp\"}', '{}', 'now'), "
        "('q/0', 'plain', 0, '{\"batch_size\":8,\"mode\":\"eager\",\"model\":\"mlp\"}', '{}', 'now');");
  }
  const auto keys = migrated_texts(path_, "SELECT job_id, pair_key FROM jobs");
  EXPECT_EQ(keys.at("p/0"), R"({"batch_size":8,"model":"mlp"})");
  EXPECT_EQ(keys.at("p/1"), keys.at("p/0"));
  EXPECT_EQ(keys.at("q/0"), std::nullopt);
}

// Rows stored before the judge's summary named the warm-up reading get it
// from their timed-phase field, as the readers named it before, so a
// query's warm-up memory reads the same over an old store.
TEST_F(StoreFile, Migration20NamesTheWarmupReadingOfTheRowsStoredBeforeIt) {
  {
    Database database(path_);
    for (std::size_t i = 0; i < 19; ++i) database.execute(migrations().at(i).sql);
    database.set_user_version(19);
    database.execute(
        "INSERT INTO results (job_id, attempt, status, model, task, batch_size, precision, mode, runner, gpus, "
        "device_name, torch_version, host, received_at, peak_memory_field, warmup_peak_memory_bytes) VALUES "
        "('gpu', 1, 'ok', 'mlp', 'train', 8, 'fp32', 'eager', 'libtorch', 1, 'H200', '2.6.0', 'h', 'now', "
        "'peak_allocated_bytes', 10), "
        "('cpu', 1, 'ok', 'mlp', 'train', 8, 'fp32', 'eager', 'libtorch', 1, 'cpu', '2.6.0', 'h', 'now', "
        "'rss_footprint_bytes', 20), "
        "('old', 1, 'ok', 'mlp', 'train', 8, 'fp32', 'eager', 'libtorch', 1, 'cpu', '2.6.0', 'h', 'now', "
        "'legacy', NULL);");
  }
  const auto fields = migrated_texts(path_, "SELECT job_id, warmup_peak_memory_field FROM results");
  EXPECT_EQ(fields.at("gpu"), "warmup_peak_allocated_bytes");
  EXPECT_EQ(fields.at("cpu"), "warmup_peak_rss_bytes");
  EXPECT_EQ(fields.at("old"), std::nullopt);
}

TEST(Store, StoringTheSameResultTwiceIsANoOp) {
  Store store(":memory:");
  const auto result = make_result({.job_id = "j1", .attempt = 1});
  EXPECT_TRUE(store.ingest_result(judged(result), "node-a"));
  EXPECT_FALSE(store.ingest_result(judged(result), "node-a"));
  EXPECT_TRUE(store.ingest_result(judged(make_result({.job_id = "j1", .attempt = 2})), "node-a"));
  EXPECT_EQ(count(store.database(), "results"), 2);
  EXPECT_EQ(count(store.database(), "result_epochs"), 6);
  EXPECT_EQ(count(store.database(), "result_steps"), 60);
  EXPECT_EQ(store.ingest_results(all_judged({result, make_result({.job_id = "j2"})}), "node-b"), 1u);
}

TEST(Store, InvalidResultsNameTheFieldAndChangeNothing) {
  Store store(":memory:");
  auto result = make_result({});
  result["timing"]["median_epoch_seconds"] = "fast";
  try {
    store.ingest_result(judged(result), "node-a");
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "timing.median_epoch_seconds");
  }
  result = make_result({});
  result["job"].erase("job_id");
  try {
    store.ingest_results(all_judged({make_result({.job_id = "fine"}), result}), "node-a");
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "job.job_id");
  }
  // The batch was one transaction: the valid result before the bad one is gone too.
  EXPECT_EQ(count(store.database(), "results"), 0);
}

// The store only stores: a row is the judge's summary, column by column by
// name; a document without one, or with a key or type no column has, is
// refused naming the summary's field, and nothing is stored.
TEST(Store, ARowIsTheJudgedSummaryAndNothingElse) {
  Store store(":memory:");
  const auto refused_field = [&](const nlohmann::json& result) {
    try {
      store.ingest_result(result, "node-a");
    } catch (const InvalidInput& error) {
      return error.field();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused_field(make_result({})), "summary");  // a runner's raw document
  auto result = judged(make_result({}));
  result["summary"]["speedup"] = 2.0;
  EXPECT_EQ(refused_field(result), "summary.speedup");
  result = judged(make_result({}));
  result["summary"]["agent"] = "forged";  // the store's own column
  EXPECT_EQ(refused_field(result), "summary.agent");
  result = judged(make_result({}));
  result["summary"]["median_epoch_s"] = "fast";
  EXPECT_EQ(refused_field(result), "summary.median_epoch_s");
  result = judged(make_result({}));
  result["summary"]["device_name"] = nullptr;
  EXPECT_EQ(refused_field(result), "summary.device_name");
  result = judged(make_result({}));
  result["summary"].erase("mfu");
  EXPECT_EQ(refused_field(result), "summary.mfu");
  result = judged(make_result({.job_id = "other"}));
  result["job"]["job_id"] = "mine";
  EXPECT_EQ(refused_field(result), "summary.job_id");
  EXPECT_EQ(count(store.database(), "results"), 0);
  EXPECT_EQ(count(store.database(), "result_documents"), 0);
  // What the summary says is what the row holds, even a figure the document would not give.
  result = judged(make_result({}));
  result["summary"]["compile_s"] = 42.0;
  EXPECT_EQ(refused_field(result), "accepted");
  auto row = store.database().prepare("SELECT compile_s, agent FROM results");
  ASSERT_TRUE(row.step());
  EXPECT_DOUBLE_EQ(row.real(0), 42.0);
  EXPECT_EQ(row.text(1), "node-a");
}

// A sweep's cost is what its priced runs cost together (docs/methodology.md);
// a sweep with none priced has none, not 0.
TEST(Store, ASweepsCostIsItsPricedRunsTogether) {
  Store store(":memory:");
  std::vector<JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (int ordinal = 0; ordinal < 3; ++ordinal) {
    const auto job_id = "priced/" + std::to_string(ordinal);
    jobs.push_back({job_id, ordinal, "k", ordinal, "libtorch", 1, {}, 3});
    auto result = judged(make_result({.job_id = job_id, .sweep = "priced"}));
    result["summary"]["run_cost"] = ordinal == 2 ? nlohmann::json(nullptr) : nlohmann::json(0.25 * (ordinal + 1));
    results.push_back(result);
  }
  store.add_sweep({"priced", "priced", nlohmann::json::object(), {}, "test", 0, "2026-12-06T00:00:00.000Z"}, jobs);
  store.add_sweep({"free", "free", nlohmann::json::object(), {}, "test", 0, "2026-12-06T00:00:00.000Z"}, {});
  store.ingest_results(results, "agent");
  const auto priced = store.sweeps("priced");
  ASSERT_EQ(priced.size(), 1u);
  ASSERT_TRUE(priced[0].cost);
  EXPECT_DOUBLE_EQ(*priced[0].cost, 0.25 + 0.5);
  EXPECT_FALSE(store.sweeps("free").at(0).cost);
}

TEST(Store, FlatColumnsHoldTheAxesAndFigures) {
  Store store(":memory:");
  store.ingest_result(
      judged(make_result(
          {.model = "resnet18", .mode = "compiled", .batch_size = 128, .epoch_seconds = {2.0, 1.0, 3.0}, .iters = 4})),
      "node-a");
  auto row = store.database().prepare(
      "SELECT model, mode, mode_ran, compiler, batch_size, device_name, median_epoch_s, samples_per_s, compile_s, "
      "agent FROM results");
  ASSERT_TRUE(row.step());
  EXPECT_EQ(row.text(0), "resnet18");
  EXPECT_EQ(row.text(1), "compiled");
  EXPECT_EQ(row.text(2), "compiled");
  EXPECT_EQ(row.text(3), "torchscript-nnc");
  EXPECT_EQ(row.integer(4), 128);
  EXPECT_EQ(row.text(5), "Test CPU");
  EXPECT_DOUBLE_EQ(row.real(6), 2.0);
  EXPECT_DOUBLE_EQ(row.real(7), 128.0 * 4 / 2.0);
  EXPECT_DOUBLE_EQ(row.real(8), 0.5);
  EXPECT_EQ(row.text(9), "node-a");
}

// Every framework allocator on a GPU (PyTorch's, TensorFlow's, XLA's in
// JAX) is compared by its timed phase's peak allocated, not by RSS.
TEST(Store, GpuAllocatorSourcesAreComparedByPeakAllocated) {
  Store store(":memory:");
  int64_t id = 0;
  for (const char* source : {"cuda_allocator", "tf_allocator", "xla_allocator"}) {
    auto result = make_result({.job_id = "gpu-" + std::to_string(++id)});
    result["memory"] = {{"source", source},
                        {"peak_allocated_bytes", 100 * id},
                        {"warmup_peak_allocated_bytes", 300 * id},
                        {"hwm_reset", source != std::string("xla_allocator")}};
    store.ingest_result(judged(result), "node-a");
  }
  auto rows = store.database().prepare(
      "SELECT peak_memory_field, peak_memory_bytes, warmup_peak_memory_bytes FROM results ORDER BY job_id");
  for (int64_t expected = 1; expected <= 3; ++expected) {
    ASSERT_TRUE(rows.step());
    EXPECT_EQ(rows.text(0), "peak_allocated_bytes");
    EXPECT_EQ(rows.integer(1), 100 * expected);
    EXPECT_EQ(rows.integer(2), 300 * expected);
  }
}

TEST(Store, MedianAndPercentileAggregates) {
  Database database(":memory:");
  database.execute("CREATE TABLE t (x REAL); INSERT INTO t VALUES (4), (1), (3), (2), (NULL)");
  auto query = database.prepare("SELECT median(x), percentile(x, 25), percentile(x, 100) FROM t");
  ASSERT_TRUE(query.step());
  EXPECT_DOUBLE_EQ(query.real(0), 2.5);
  EXPECT_DOUBLE_EQ(query.real(1), 1.75);  // type 7: position 0.75 between 1 and 2
  EXPECT_DOUBLE_EQ(query.real(2), 4.0);
  auto empty = database.prepare("SELECT median(x) FROM t WHERE x > 100");
  ASSERT_TRUE(empty.step());
  EXPECT_TRUE(empty.is_null(0));
  EXPECT_THROW(database.prepare("SELECT percentile(x, 101) FROM t").step(), SqliteError);
}

TEST(Store, ConfigMediansViewPoolsRepeats) {
  Store store(":memory:");
  int id = 0;
  for (double seconds : {1.0, 3.0, 2.0}) {
    store.ingest_result(judged(make_result({.job_id = "e" + std::to_string(++id), .epoch_seconds = {seconds}})), "a");
  }
  store.ingest_result(judged(make_result({.job_id = "c1", .mode = "compiled", .epoch_seconds = {0.5}})), "a");
  auto view = store.database().prepare("SELECT mode, results, median_epoch_s FROM config_medians ORDER BY mode");
  ASSERT_TRUE(view.step());
  EXPECT_EQ(view.text(0), "compiled");
  EXPECT_EQ(view.integer(1), 1);
  ASSERT_TRUE(view.step());
  EXPECT_EQ(view.text(0), "eager");
  EXPECT_EQ(view.integer(1), 3);
  EXPECT_DOUBLE_EQ(view.real(2), 2.0);
}

// A cell as the plain SQLite API reads it: null, or a number.
std::optional<double> plain_cell(sqlite3_stmt* row, int column) {
  if (sqlite3_column_type(row, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(row, column);
}

// Every view reads in any SQLite client (3.25 or later), which knows none
// of the functions torchsweep registers on its own connections, with the
// same exact medians as torchsweep's median().
TEST_F(StoreFile, ViewsNeedNoFunctionOfTorchsweepsAndGiveItsExactMedians) {
  {
    Store store(path_);
    int id = 0;
    // Groups of 1 to 4 runs: odd and even counts; compiled runs carry a compile time, eager ones none.
    const std::vector<std::pair<std::string, std::vector<double>>> groups{{"eager", {1.3, 0.7, 1.1, 0.9}},
                                                                          {"compiled", {0.55, 0.51, 0.6}},
                                                                          {"eager-bf16", {2.2}},
                                                                          {"compiled-bs8", {0.3, 0.1}}};
    for (const auto& [name, seconds] : groups) {
      for (std::size_t run = 0; run < seconds.size(); ++run) {
        SyntheticResult result{.job_id = "j" + std::to_string(++id),
                               .mode = name.starts_with("compiled") ? "compiled" : "eager",
                               .precision = name.ends_with("bf16") ? "bf16" : "fp32",
                               .batch_size = name.ends_with("bs8") ? 8 : 64,
                               .epoch_seconds = {seconds[run]},
                               .peak_bytes = (int64_t{1} << 30) + 4097 * static_cast<int64_t>(run * run)};
        store.ingest_result(judged(make_result(result)), "a");
      }
    }
  }
  const std::string columns = "mode, precision, batch_size";
  sqlite3* opened = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &opened, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> plain(opened, sqlite3_close);
  for (const char* view : {"config_medians", "latest_sweep_per_tag", "result_steps"}) {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(plain.get(), ("SELECT * FROM " + std::string(view)).c_str(), -1, &statement, nullptr),
              SQLITE_OK)
        << view << ": " << sqlite3_errmsg(plain.get());
    sqlite3_finalize(statement);
  }
  sqlite3_stmt* prepared = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(plain.get(),
                               ("SELECT " + columns +
                                ", results, median_epoch_s, samples_per_s, peak_memory_bytes, compile_s "
                                "FROM config_medians ORDER BY " +
                                columns)
                                   .c_str(),
                               -1, &prepared, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(plain.get());
  const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> view(prepared, sqlite3_finalize);

  Database database(path_, Database::Access::read_only);
  auto expected = database.prepare(
      "SELECT mode_ran, precision, batch_size, COUNT(*), median(median_epoch_s), median(samples_per_s), "
      "median(peak_memory_bytes), median(compile_s) FROM results WHERE status = 'ok' "
      "GROUP BY model, task, batch_size, precision, mode_ran, compiler, runner, gpus, device_name ORDER BY 1, 2, 3");
  int rows = 0;
  while (expected.step()) {
    ASSERT_EQ(sqlite3_step(view.get()), SQLITE_ROW) << sqlite3_errmsg(plain.get());
    ++rows;
    const std::string where = expected.text(0) + "/" + expected.text(1) + "/" + expected.text(2);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(view.get(), 0)), expected.text(0));
    EXPECT_EQ(sqlite3_column_int64(view.get(), 3), expected.integer(3)) << where;
    for (int column = 4; column <= 7; ++column) {
      const auto value = plain_cell(view.get(), column);
      if (expected.is_null(column)) {
        EXPECT_FALSE(value) << where << " column " << column;
      } else {
        ASSERT_TRUE(value) << where << " column " << column;
        EXPECT_EQ(*value, expected.real(column)) << where << " column " << column;  // exact, not near
      }
    }
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(sqlite3_step(view.get()), SQLITE_DONE);
}

TEST(Transaction, RollsBackUnlessCommittedAndRefusesADoubleCommit) {
  Database database(":memory:");
  database.execute("CREATE TABLE t (x INTEGER)");
  try {
    Transaction transaction(database);
    database.execute("INSERT INTO t VALUES (1)");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(count(database, "t"), 0);
  Transaction transaction(database);
  database.execute("INSERT INTO t VALUES (2)");
  transaction.commit();
  EXPECT_THROW(transaction.commit(), std::logic_error);
  EXPECT_EQ(count(database, "t"), 1);
}

TEST(Sqlite, ErrorsCarryTheCodeAndTheSql) {
  Database database(":memory:");
  try {
    database.prepare("SELECT * FROM missing_table");
    FAIL();
  } catch (const SqliteError& error) {
    EXPECT_NE(error.sql().find("missing_table"), std::string::npos);
    EXPECT_NE(error.code(), 0);
  }
}

}  // namespace
}  // namespace ts::store
