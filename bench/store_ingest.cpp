// The store under load: ingest N synthetic results through Store's real path
// (schema validation, flat columns, raw epoch and step times) in batches,
// then time the grouped median query of the config_medians view over them.
// Targets (issue 4): >= 200,000 results/s ingest, grouped medians < 1.5 s at 1,000,000.
// As the coordinator does it (#53): each batch validated and laid out
// (store::prepare_result) by `readers` threads while the one writer stores
// the batch before it; readers=0 does both in turn on one thread.
//
//   bench_store_ingest [results=100000] [batch=10000] [db=/tmp/ts_bench_store.db] [readers=cores]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "shared/schema.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Validates and lays out `documents` on `threads` threads (or this one).
std::vector<ts::store::PreparedResult> prepare(const std::vector<nlohmann::json>& documents, unsigned threads) {
  std::vector<ts::store::PreparedResult> prepared(documents.size());
  const auto part = [&](std::size_t begin, std::size_t step) {
    for (std::size_t i = begin; i < documents.size(); i += step) prepared[i] = ts::store::prepare_result(documents[i]);
  };
  if (threads == 0) {
    part(0, 1);
    return prepared;
  }
  std::vector<std::future<void>> parts;
  for (unsigned t = 0; t < threads; ++t) parts.push_back(std::async(std::launch::async, part, t, threads));
  for (auto& done : parts) done.get();
  return prepared;
}

int main(int argc, char** argv) {
  const long total = argc > 1 ? std::stol(argv[1]) : 100000;
  const long batch = argc > 2 ? std::stol(argv[2]) : 10000;
  const std::string path = argc > 3 ? argv[3] : "/tmp/ts_bench_store.db";
  const unsigned readers = argc > 4 ? static_cast<unsigned>(std::stoul(argv[4])) : std::thread::hardware_concurrency();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  ts::store::Store store(path);

  // 2 models x 3 batch sizes x 2 precisions x 2 modes = 24 configurations, on 4 hosts.
  const char* models[] = {"resnet50", "resnet18"};
  const long batch_sizes[] = {64, 128, 256};
  const char* precisions[] = {"fp32", "bf16"};
  const char* modes[] = {"eager", "compiled"};
  // Documents are built and judged before the clock starts: it times the store's path alone.
  std::vector<std::vector<nlohmann::json>> batches(1);
  for (long i = 0; i < total; ++i) {
    auto& pending = batches.back();
    const double jitter = 1.0 + static_cast<double>(i % 17) / 100.0;
    pending.push_back(
        ts::simulation::judged(ts::simulation::make_result({.job_id = "job-" + std::to_string(i),
                                                            .model = models[i % 2],
                                                            .mode = modes[(i / 2) % 2],
                                                            .precision = precisions[(i / 4) % 2],
                                                            .batch_size = batch_sizes[(i / 8) % 3],
                                                            .host = "node-" + std::to_string((i / 24) % 4),
                                                            .epoch_seconds = {1.0 * jitter, 1.1 * jitter, 0.9 * jitter},
                                                            .iters = 4})));
    if (static_cast<long>(pending.size()) == batch && i + 1 < total) batches.emplace_back();
  }
  double writer_seconds = 0;  // the one writer's own share: the ceiling with readers enough
  const auto start_ingest = std::chrono::steady_clock::now();
  auto next = std::async(readers ? std::launch::async : std::launch::deferred, prepare, std::cref(batches[0]), readers);
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const auto prepared = next.get();
    if (b + 1 < batches.size()) {
      next =
          std::async(readers ? std::launch::async : std::launch::deferred, prepare, std::cref(batches[b + 1]), readers);
    }
    const auto writing = std::chrono::steady_clock::now();
    store.ingest_results(prepared, "bench");
    writer_seconds += seconds_since(writing);
  }
  const double ingest_seconds = seconds_since(start_ingest);
  std::printf(
      "ingested %ld results (3 epochs, 12 steps each) in batches of %ld, %u reader threads: %.2f s, %.0f "
      "results/s\n",
      total, batch, readers, ingest_seconds, static_cast<double>(total) / ingest_seconds);
  std::printf("the writer alone (binding and stepping): %.2f s, a ceiling of %.0f results/s\n", writer_seconds,
              static_cast<double>(total) / writer_seconds);
  // The share of one thread's work that schema validation alone takes.
  const ts::schema::Validator validator("result.schema.json");
  const auto start_validation = std::chrono::steady_clock::now();
  for (const auto& document : batches[0]) validator.validate(document);
  const double per_document = seconds_since(start_validation) / static_cast<double>(batches[0].size());
  std::printf("schema validation alone: %.1f us per document\n", 1e6 * per_document);

  const auto start = std::chrono::steady_clock::now();
  auto query = store.database().prepare("SELECT COUNT(*), SUM(results) FROM config_medians");
  query.step();
  std::printf("grouped medians (config_medians view): %lld groups over %lld results in %.3f s\n",
              static_cast<long long>(query.integer(0)), static_cast<long long>(query.integer(1)), seconds_since(start));
  std::printf("store file: %.1f MiB\n", static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));
  return 0;
}
