// The store under load: ingest N synthetic results through Store's real path
// (schema validation, flat columns, raw epoch and step times) in batches,
// then time the grouped median query of the config_medians view over them.
// Targets (issue 4): >= 200,000 results/s ingest, grouped medians < 1.5 s at 1,000,000.
//
//   bench_store_ingest [results=100000] [batch=10000] [db=/tmp/ts_bench_store.db]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "shared/schema.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const long total = argc > 1 ? std::stol(argv[1]) : 100000;
  const long batch = argc > 2 ? std::stol(argv[2]) : 10000;
  const std::string path = argc > 3 ? argv[3] : "/tmp/ts_bench_store.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  ts::store::Store store(path);

  // 2 models x 3 batch sizes x 2 precisions x 2 modes = 24 configurations, on 4 hosts.
  const char* models[] = {"resnet50", "resnet18"};
  const long batch_sizes[] = {64, 128, 256};
  const char* precisions[] = {"fp32", "bf16"};
  const char* modes[] = {"eager", "compiled"};
  std::vector<nlohmann::json> pending;
  pending.reserve(static_cast<std::size_t>(batch));
  double ingest_seconds = 0, validation_seconds = 0;
  const ts::schema::Validator validator("result.schema.json");
  for (long i = 0; i < total; ++i) {
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
    if (static_cast<long>(pending.size()) == batch || i + 1 == total) {
      auto start = std::chrono::steady_clock::now();  // documents are built and judged outside the clock
      store.ingest_results(pending, "bench");
      ingest_seconds += seconds_since(start);
      start = std::chrono::steady_clock::now();  // the share of it that schema validation alone takes
      for (const auto& document : pending) validator.validate(document);
      validation_seconds += seconds_since(start);
      pending.clear();
    }
  }
  std::printf("ingested %ld results (3 epochs, 12 steps each) in batches of %ld: %.2f s, %.0f results/s\n", total,
              batch, ingest_seconds, static_cast<double>(total) / ingest_seconds);
  std::printf("of which schema validation alone: %.2f s (%.0f%%)\n", validation_seconds,
              100.0 * validation_seconds / ingest_seconds);

  const auto start = std::chrono::steady_clock::now();
  auto query = store.database().prepare("SELECT COUNT(*), SUM(results) FROM config_medians");
  query.step();
  std::printf("grouped medians (config_medians view): %lld groups over %lld results in %.3f s\n",
              static_cast<long long>(query.integer(0)), static_cast<long long>(query.integer(1)), seconds_since(start));
  std::printf("store file: %.1f MiB\n", static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));
  return 0;
}
