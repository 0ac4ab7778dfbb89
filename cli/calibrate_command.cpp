// torchsweep calibrate SWEEP (docs/noise.md): A/A, every configuration of
// the sweep run --rounds times as identical jobs, on this machine
// (cli/local_sweep.hpp) or on a cluster (--coordinator); then its noise by
// level and the false-alarm rate of the regression rule, recorded in the
// store's calibrations tables.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/local_sweep.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "readers/noise.hpp"
#include "shared/errors.hpp"
#include "shared/regression_rule.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/wire/protocol.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

struct CalibrateSettings {
  LocalSweepSettings local;
  int64_t rounds = 0;
  std::size_t night_runs = readers::NoiseOptions{}.night_runs;
  ClientSettings client;  // with --coordinator: the calibration runs on that cluster
  int64_t timeout_s = 7 * 24 * 3600;
};

// calibrate's end (docs/noise.md): the sweep's noise table, printed with what
// a night of its configurations should expect; returned as the records of
// the store's calibrations tables.
std::vector<nlohmann::json> print_noise(store::Database& database, const std::string& sweep_id,
                                        std::size_t night_runs) {
  readers::NoiseOptions options;
  options.filter.sweeps = {sweep_id};
  options.night_runs = night_runs;
  const auto noise = readers::noise_table(database, options);
  std::cout << "\nNoise by configuration (sweep " << sweep_id
            << "; spreads on the log scale; false alarms of the nightly rule on A/A pairs of " << night_runs
            << " runs against " << night_runs << "):\n"
            << render(noise, Format::table, terminal_width());
  double expected = 0;
  std::size_t measured = 0;
  for (const auto& row : noise.rows) {
    if (const auto& rate = row[readers::column_of(noise, "false_alarm_rate")]; rate.is_number()) {
      expected += rate.get<double>();
      ++measured;
    }
  }
  if (measured > 0) {
    std::cout << fmt::format(
        "\nA night of these {} configurations: {:.3f} false alarms expected from the measured rates (nominal {:.3f})\n",
        measured, expected, static_cast<double>(measured) * options.rule.alpha / 2);
  }
  return readers::calibration_records(noise);
}

// calibrate --coordinator: the calibration submitted to a cluster, waited
// for, its noise read from the store read-only and recorded by the
// coordinator, the store's one writer.
int calibrate_on_cluster(const CalibrateSettings& settings, const nlohmann::json& spec) {
  const auto submitted =
      request(settings.client,
              wire::make_message("submit",
                                 {{"sweep", spec}, {"origin", settings.local.sweep}, {"submitter", submitter_name()}}));
  const auto sweep_id = submitted.at("sweep_id").get<std::string>();
  std::fprintf(stderr, "calibration %s submitted to %s: %lld jobs; waiting for them\n", sweep_id.c_str(),
               settings.client.coordinator.c_str(), static_cast<long long>(submitted.at("jobs").get<int64_t>()));
  wait_for_sweep(settings.client, sweep_id, std::chrono::seconds(settings.timeout_s));
  auto database = store::open_read_only(settings.local.db);
  const auto records = print_noise(database, sweep_id, settings.night_runs);
  request(settings.client, wire::make_message("record_calibration", {{"sweep", sweep_id},
                                                                     {"night_runs", settings.night_runs},
                                                                     {"alpha", RegressionRule{}.alpha},
                                                                     {"configurations", records}}));
  std::cout << "\nRecorded by the coordinator in " << settings.local.db << " (torchsweep query --calibrations)\n";
  const auto status = request(settings.client, wire::make_message("status", {{"sweep", sweep_id}, {"agents", false}}));
  const auto failed = status.at("sweeps").at(0).at("jobs").value("failed", int64_t{0});
  if (failed > 0) {
    std::fprintf(stderr, "%lld jobs of the calibration failed: torchsweep export --db %s --sweep %s --include-failed\n",
                 static_cast<long long>(failed), settings.local.db.c_str(), sweep_id.c_str());
    return exit_code::run_failed;
  }
  return exit_code::ok;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "calibrate",
      "A/A calibration on this machine: each configuration of the sweep run --rounds times as identical jobs, then "
      "its noise by level and the false-alarm rate of the regression rule (docs/noise.md)");
  auto settings = std::make_shared<CalibrateSettings>();
  add_local_sweep_options(command, settings->local);
  command
      ->add_option("--rounds", settings->rounds,
                   "identical runs of each configuration (separate processes); default: the sweep's calibration block")
      ->check(CLI::Range(int64_t{2}, int64_t{10000}));
  command->add_option("--night-runs", settings->night_runs, "runs a night in the A/A pairs of the false-alarm rate")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{10000}));
  add_client_options(command, settings->client);
  command->add_option("--timeout-s", settings->timeout_s, "with --coordinator: how long to wait for the calibration")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return [settings, command] {
    auto spec = sweep::read_document(settings->local.sweep);
    // A/A: every configuration the same way, round after round (the sweep's calibration block, docs/noise.md).
    if (settings->rounds > 0) {
      spec.erase("repeats");
      spec["calibration"]["rounds"] = settings->rounds;
    } else if (!spec.contains("calibration")) {
      throw InvalidInput("--rounds", "the sweep has no calibration block: give the rounds");
    }
    if (command->count("--coordinator") > 0) return calibrate_on_cluster(*settings, spec);
    const auto parsed = sweep::parse(spec, settings->local.sweep);
    if (parsed.calibration_nodes > 1) {
      throw InvalidInput("calibration.nodes", "without --coordinator calibrate runs one local agent: give the " +
                                                  std::to_string(parsed.calibration_nodes) +
                                                  " nodes' coordinator with --coordinator");
    }
    const auto& db = settings->local.db;
    return run_local_sweep(settings->local, spec, [&](store::Store& store, const std::string& sweep_id) {
      store.record_calibration(sweep_id, parsed.repeats, static_cast<int64_t>(settings->night_runs),
                               RegressionRule{}.alpha, print_noise(store.database(), sweep_id, settings->night_runs));
      std::cout << "\nRecorded in " << db
                << " (torchsweep query --calibrations); ask again with: torchsweep query --db " << db << " --sweep "
                << sweep_id << " --noise\n";
    });
  };
}

}  // namespace ts::cli
