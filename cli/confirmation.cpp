#include "cli/confirmation.hpp"

#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/terminal_width.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/wire/protocol.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

using Clock = std::chrono::steady_clock;

readers::Table classify(const std::string& db, const readers::RegressionOptions& options) {
  auto database = store::open_read_only(db);  // a fresh connection: it sees the reruns' results
  return readers::regressions(database, options);
}

}  // namespace

void wait_for_sweep(const ClientSettings& client, const std::string& sweep_id, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::optional<Clock::time_point> unreachable_since;
  while (true) {
    try {
      const auto reply = request(client, wire::make_message("status", {{"sweep", sweep_id}, {"agents", false}}));
      if (unreachable_since) log::info("the coordinator answers again; still waiting for sweep {}", sweep_id);
      unreachable_since.reset();
      const auto& sweeps = reply.at("sweeps");
      if (!sweeps.empty() && sweeps.at(0).at("state") != "active") return;
    } catch (const InvalidInput&) {
      throw;
    } catch (const std::runtime_error& error) {
      // A coordinator restarting (an upgrade, a crash under systemd) resumes the sweep from the store: wait it out.
      if (!unreachable_since) {
        unreachable_since = Clock::now();
        log::warn("{}; waiting up to {} s for the coordinator to come back", error.what(),
                  std::chrono::duration_cast<std::chrono::seconds>(coordinator_restart_grace).count());
      }
      if (Clock::now() - *unreachable_since > coordinator_restart_grace) throw;
    }
    if (Clock::now() > deadline) {
      throw std::runtime_error("sweep " + sweep_id + " still runs after " + std::to_string(timeout.count()) +
                               " s (--timeout-s)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a remote state: no event to wait on
  }
}

readers::Table confirm_regressions(const ClientSettings& client, const std::string& db,
                                   const readers::RegressionOptions& options, int64_t runs,
                                   std::chrono::seconds timeout) {
  auto table = classify(db, options);
  const auto axes = readers::column_of(table, "runs");
  const auto classification = readers::column_of(table, "classification");
  std::string sweep_id;
  std::size_t queued = 0;
  auto database = store::open_read_only(db);
  for (const auto& row : table.rows) {
    if (row[classification] != "flagged") continue;
    // The configurations behind the flagged group, and how many reruns each.
    readers::ResultFilter group = options.filter;
    for (std::size_t a = 0; a < axes; ++a) {
      if (row[a].is_null()) continue;
      group.where.emplace_back(table.columns[a], row[a].is_string() ? row[a].get<std::string>() : row[a].dump());
    }
    const auto configurations = readers::configurations_of(database, group);
    if (configurations.empty()) continue;
    const auto each =
        runs > 0 ? runs : std::max<int64_t>(5, row[axes].get<int64_t>() / static_cast<int64_t>(configurations.size()));
    const auto reply = request(client, wire::make_message("rerun", {{"sweep", options.filter.sweeps.at(0)},
                                                                    {"configurations", configurations},
                                                                    {"runs", each}}));
    sweep_id = reply.at("sweep_id").get<std::string>();
    queued += reply.at("jobs").size();
  }
  if (queued == 0) return table;
  log::info("{} confirmation runs queued in sweep {}; waiting for them", queued, sweep_id);
  wait_for_sweep(client, sweep_id, timeout);
  return classify(db, options);
}

void add_confirmation_options(CLI::App* command, int64_t& runs, int64_t& timeout_s) {
  command->add_option("--runs", runs, "reruns per flagged configuration (default: as many as it ran, at least 5)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  command->add_option("--timeout-s", timeout_s, "how long to wait for the runs")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

std::map<std::string, int> count_classifications(const readers::Table& table) {
  const auto classification = readers::column_of(table, "classification");
  std::map<std::string, int> counted;
  for (const auto& row : table.rows) {
    if (row[classification].is_string()) ++counted[row[classification].get<std::string>()];
  }
  return counted;
}

void print_classification(const readers::Table& table, Format format) {
  std::cout << render(table, format, terminal_width());
  auto counted = count_classifications(table);
  std::fprintf(stderr, "%d confirmed, %d unconfirmed, %d suspicious, %d flagged but not rerun\n", counted["confirmed"],
               counted["unconfirmed"], counted["suspicious"], counted["flagged"]);
}

}  // namespace ts::cli
