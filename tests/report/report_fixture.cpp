// The fixture of the report's browser test (tests/report/report_browser_test.py):
//
//   report_fixture --db FILE history   30 nightly sweeps (tag nightly, ids nightly-01..30), 5 runs per
//                                      configuration with 2% seeded noise: mlp compiled is 25% slower from
//                                      night 26 on (a step), mlp eager 30% slower on night 12 only (a blip),
//                                      resnet18 eager flat, and mlp eager on 2 ranks (scaling); from night
//                                      25 the mlp runs on one rank carry profiles, the step a planted
//                                      aten::bmm
//   report_fixture --db FILE single    one sweep, one run per configuration, and a language model's
//                                      (gpt at two batch sizes, its throughput in tokens, and its
//                                      generation eager and compiled)
//   report_fixture --db FILE empty     a store with no sweep at all
//   report_fixture --job J --out R     a runner on the worker contract (registered as libtorch with
//                                      an agent): a result whose epochs last the job's labels.seconds,
//                                      with 2% noise, so a confirmation rerun of the history's jobs
//                                      reproduces the step
#include <fmt/format.h>

#include <cstdio>
#include <random>
#include <string>

#include "shared/json_io.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace {

using ts::simulation::all_judged;
using ts::simulation::make_result;
using ts::simulation::SyntheticResult;

struct Configuration {
  std::string model, mode;
  int64_t gpus;
  double seconds;
};

// A result for `job` whose epochs last about `seconds`.
nlohmann::json result_for(const nlohmann::json& job, double seconds, std::mt19937& generator) {
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  SyntheticResult r;
  r.job_id = job.at("job_id");
  r.sweep = job.at("sweep");
  r.model = job.at("model");
  r.mode = job.at("mode");
  r.gpus = job.at("gpus");
  r.batch_size = job.at("batch_size");
  const double t = seconds * (1 + noise(generator));
  r.epoch_seconds = {t, t * (1 + noise(generator) / 4), t * (1 + noise(generator) / 4)};
  r.peak_bytes = (r.mode == "eager" ? 900 : 700) * int64_t{1 << 20};
  auto result = make_result(r);
  result["job"] = job;
  return result;
}

// A profile section (docs/explain.md) of a run whose step took `step` seconds: the products, the activation
// (eager's ATen op, compiled's fused kernel) and the optimizer in their shares of the configuration's usual step,
// and whatever the step took beyond it as a planted aten::bmm, which the Why section of a regression names.
nlohmann::json profile_of(const Configuration& configuration, double step) {
  const double usual = configuration.seconds / 10;  // make_result's 10 steps an epoch
  std::vector<ts::simulation::SyntheticOperator> operators;
  const double planted = step - usual * 1.05;  // beyond the 2% noise: the step the history injected
  if (planted > 0) operators.push_back({"aten::bmm", 12, planted});
  operators.push_back({"aten::addmm", 3, 0.55 * usual});
  operators.push_back({"Optimizer.step#SGD.step", 1, 0.2 * usual});
  if (configuration.mode == "eager") {
    operators.push_back({"aten::relu", 2, 0.15 * usual});
  } else {
    operators.push_back({"graph_0_cpp_fused_relu_0", 1, 0.1 * usual});
  }
  return ts::simulation::make_profile(operators, {step * 1.04, step * 1.05});
}

void add_night(ts::store::Store& store, int night, int runs, std::mt19937& generator) {
  const auto sweep_id = fmt::format("nightly-{:02}", night);
  const nlohmann::json spec{{"name", "nightly"},
                            {"tags", {"nightly"}},
                            {"axes", {{"model", {"mlp", "resnet18"}}, {"mode", {"eager", "compiled"}}}},
                            {"fixed", {{"batch_size", 64}}},
                            {"repeats", runs}};
  std::vector<ts::store::JobRecord> jobs;
  std::vector<nlohmann::json> results;
  int ordinal = 0;
  for (const Configuration& configuration :
       {Configuration{"mlp", "eager", 1, 1.0}, Configuration{"mlp", "compiled", 1, 0.6},
        Configuration{"resnet18", "eager", 1, 4.0}, Configuration{"mlp", "eager", 2, 1.1}}) {
    double seconds = configuration.seconds;
    if (configuration.mode == "compiled" && night >= 26) seconds *= 1.25;
    if (configuration.model == "mlp" && configuration.mode == "eager" && night == 12) seconds *= 1.3;
    const auto key =
        nlohmann::json{{"model", configuration.model}, {"mode", configuration.mode}, {"gpus", configuration.gpus}}
            .dump();
    for (int run = 0; run < runs; ++run) {
      const auto job_id = fmt::format("{}/{:04}", sweep_id, ordinal);
      const nlohmann::json job{{"schema_version", 1},
                               {"job_id", job_id},
                               {"sweep", sweep_id},
                               {"model", configuration.model},
                               {"mode", configuration.mode},
                               {"precision", "fp32"},
                               {"batch_size", 64},
                               {"task", "train"},
                               {"gpus", configuration.gpus},
                               {"device", "cpu"},
                               {"labels", {{"seconds", fmt::format("{}", seconds)}}}};
      jobs.push_back({job_id, ordinal++, key, run, "libtorch", configuration.gpus, job, 3});
      auto result = result_for(job, seconds, generator);
      result["job"]["attempt"] = 1;
      if (night >= 25 && configuration.model == "mlp" && configuration.gpus == 1) {
        result["profile"] = profile_of(configuration, result.at("timing").at("step_seconds").at(0).at(0));
      }
      results.push_back(std::move(result));
    }
  }
  store.add_sweep(
      {sweep_id, "nightly", spec, {"nightly"}, "test", 0, fmt::format("2026-11-{:02}T02:00:00.000Z", night)}, jobs);
  store.ingest_results(all_judged(results), "node-a");
  for (const auto& job : jobs) store.job_finished(job.job_id, "done");
}

// One sweep of gpt (seq_len 128) at batch sizes 8 and 16, one run each,
// its results carrying tokens_per_second as the agent's judge gives it,
// and its generation eager and compiled with the judge's figures.
void add_language_model(ts::store::Store& store, std::mt19937& generator) {
  const std::string sweep_id = "language";
  const nlohmann::json spec{
      {"name", "language"}, {"axes", {{"batch_size", {8, 16}}}}, {"fixed", {{"model", "gpt"}, {"seq_len", 128}}}};
  std::vector<ts::store::JobRecord> jobs;
  std::vector<nlohmann::json> results;
  for (const int64_t batch_size : {8, 16}) {
    const auto job_id = fmt::format("{}/{:04}", sweep_id, jobs.size());
    const nlohmann::json job{{"schema_version", 1}, {"job_id", job_id},    {"sweep", sweep_id},        {"model", "gpt"},
                             {"mode", "eager"},     {"precision", "fp32"}, {"batch_size", batch_size}, {"seq_len", 128},
                             {"task", "train"},     {"gpus", 1},           {"device", "cpu"}};
    jobs.push_back({job_id, static_cast<int64_t>(jobs.size()), nlohmann::json{{"batch_size", batch_size}}.dump(), 0,
                    "libtorch", 1, job, 3});
    auto result = result_for(job, 0.5 * static_cast<double>(batch_size) / 8, generator);
    result["job"]["attempt"] = 1;
    result["timing"]["tokens_per_second"] = result["timing"]["samples_per_second"].get<double>() * 128;
    results.push_back(std::move(result));
  }
  // Its generation, eager and compiled: compiled decodes a token in 60% of eager's time.
  for (const std::string mode : {"eager", "compiled"}) {
    const auto job_id = fmt::format("{}/{:04}", sweep_id, jobs.size());
    const double p50 = mode == "eager" ? 0.010 : 0.006;
    const nlohmann::json job{{"schema_version", 1}, {"job_id", job_id},    {"sweep", sweep_id}, {"model", "gpt"},
                             {"mode", mode},        {"precision", "fp32"}, {"batch_size", 8},   {"seq_len", 128},
                             {"task", "generate"},  {"prompt_len", 16},    {"new_tokens", 8},   {"gpus", 1},
                             {"device", "cpu"}};
    jobs.push_back(
        {job_id, static_cast<int64_t>(jobs.size()), nlohmann::json{{"mode", mode}}.dump(), 0, "libtorch", 1, job, 3});
    auto result = result_for(job, 7 * p50, generator);
    result["job"]["attempt"] = 1;
    result["execution"]["task"] = "generate";
    result["timing"]["tokens_per_second"] = 8 / p50;
    result["generation"] = {{"prompt_len", 16},
                            {"new_tokens", 8},
                            {"prefill_seconds", {3 * p50}},
                            {"cache", "static"},
                            {"kv_cache_bytes", 1 << 20},
                            {"tokens", {1, 2, 3, 4, 5, 6, 7, 8}},
                            {"matches_eager", mode == "eager" ? nlohmann::json(nullptr) : nlohmann::json(true)},
                            {"first_mismatch", nullptr},
                            {"prefill_seconds_median", 3 * p50},
                            {"decode_tokens_per_second", 8 / p50},
                            {"decode_latency", {{"p50", p50}, {"p90", 1.5 * p50}, {"p99", 2 * p50}}}};
    results.push_back(std::move(result));
  }
  store.add_sweep({sweep_id, "language", spec, {}, "test", 0, "2026-11-02T02:00:00.000Z"}, jobs);
  store.ingest_results(all_judged(results), "node-a");
  for (const auto& job : jobs) store.job_finished(job.job_id, "done");
}

int write_store(const std::string& path, const std::string& kind) {
  ts::store::Store store(path);
  std::mt19937 generator(20261201);
  if (kind == "history") {
    for (int night = 1; night <= 30; ++night) add_night(store, night, 5, generator);
  } else if (kind == "single") {
    add_night(store, 1, 1, generator);
    add_language_model(store, generator);
  } else if (kind != "empty") {
    std::fprintf(stderr, "unknown kind '%s'\n", kind.c_str());
    return 2;
  }
  return 0;
}

int run_job(const std::string& job_path, const std::string& out_path) {
  const auto job = ts::json_io::read(job_path);
  std::random_device seed;
  std::mt19937 generator(seed());
  const auto seconds = std::stod(job.at("labels").at("seconds").get<std::string>());
  ts::json_io::write_atomically(out_path, result_for(job, seconds, generator));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    std::printf("report_fixture 0.1.0\n");
    return 0;
  }
  if (args.size() == 3 && args[0] == "--db") return write_store(args[1], args[2]);
  if (args.size() >= 4 && args[0] == "--job" && args[2] == "--out") return run_job(args[1], args[3]);
  std::fprintf(stderr, "usage: report_fixture --db FILE history|single|empty | --job JOB --out RESULT\n");
  return 2;
}
