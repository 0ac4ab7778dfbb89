// torchsweep run SWEEP: the embedded default. A coordinator on a free
// loopback port, one local agent and the store, all in this process; the
// jobs still run in their own worker processes. Prints progress while the
// sweep runs, then the results table.
#include <fmt/format.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "agent/agent.hpp"
#include "agent/allowed_roots.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/key_value.hpp"
#include "cli/shutdown.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "coordinator/coordinator.hpp"
#include "readers/noise.hpp"
#include "readers/query.hpp"
#include "readers/report.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/protocol.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

using Clock = std::chrono::steady_clock;
using coordinator::JobEvent;

std::string duration_text(double seconds) {
  const auto whole = static_cast<int64_t>(seconds + 0.5);
  return whole >= 60 ? fmt::format("{}m{:02}s", whole / 60, whole % 60) : fmt::format("{}s", whole);
}

// "model=mlp precision=fp32 mode=compiled" from a configuration key (JSON).
std::string describe(const std::string& config_key) {
  std::string text;
  const auto configuration = nlohmann::json::parse(config_key);
  for (const auto& [key, value] : configuration.items()) {
    text += (text.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

// The progress of one sweep: a rewritten line on a terminal, one line per
// finished job otherwise (logs, CI).
class ProgressReport {
 public:
  ProgressReport(std::size_t total, store::Store& store) : total_(total), store_(store), tty_(isatty(STDERR_FILENO)) {}

  void on_event(const JobEvent& event) {
    switch (event.kind) {
      case JobEvent::Kind::started:
        current_ = event.job_id;
        epoch_ = {0, 0};
        break;
      case JobEvent::Kind::progress:
        epoch_ = {event.epoch, event.epochs};
        break;
      case JobEvent::Kind::requeued:
        line(fmt::format("retrying {}: {}", event.job_id, event.detail));
        break;
      case JobEvent::Kind::added:  // another round of an adaptive sweep
        ++total_;
        break;
      case JobEvent::Kind::done:
      case JobEvent::Kind::failed:
      case JobEvent::Kind::cancelled:
        ++finished_;
        if (event.kind == JobEvent::Kind::failed) ++failed_;
        if (event.kind == JobEvent::Kind::cancelled) ++cancelled_;
        if (!tty_ || event.kind == JobEvent::Kind::failed) {
          const auto job = store_.job(event.job_id);
          line(fmt::format("[{}/{}] {} {}{}", finished_, total_,
                           event.kind == JobEvent::Kind::done     ? "done  "
                           : event.kind == JobEvent::Kind::failed ? "FAILED"
                                                                  : "cancelled",
                           job ? describe(job->config_key) : event.job_id,
                           event.detail.empty() ? "" : ": " + event.detail.substr(0, 300)));
        }
        break;
    }
    if (tty_) redraw();
  }
  bool complete() const { return finished_ >= total_; }
  std::size_t failed() const { return failed_; }
  std::size_t cancelled() const { return cancelled_; }
  std::size_t finished() const { return finished_; }
  void close() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  void line(const std::string& text) {
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  void redraw() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
    const auto eta =
        finished_ > 0
            ? duration_text(elapsed / static_cast<double>(finished_) * static_cast<double>(total_ - finished_))
            : std::string("?");
    // Cancelled jobs are counted apart: after Ctrl-C "[12/12] 0 failed" read as a clean run.
    auto text = fmt::format("[{}/{}] {} failed{}, elapsed {}, ETA {}", finished_, total_, failed_,
                            cancelled_ > 0 ? fmt::format(", {} cancelled", cancelled_) : std::string(),
                            duration_text(elapsed), complete() ? "0s" : eta);
    if (!complete() && !current_.empty()) {
      text += fmt::format(" | {}", current_.substr(current_.find('/') + 1));
      if (epoch_.second > 0) text += fmt::format(" epoch {}/{}", epoch_.first, epoch_.second);
    }
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
  }

  std::size_t total_, finished_ = 0, failed_ = 0, cancelled_ = 0;
  store::Store& store_;
  bool tty_;
  Clock::time_point started_ = Clock::now();
  std::string current_;
  std::pair<int64_t, int64_t> epoch_{0, 0};
};

// Beside the store: runs/torchsweep.db -> runs/torchsweep.report.html.
std::string report_beside(const std::string& db) {
  return std::filesystem::path(db).replace_extension(".report.html").string();
}

void print_results(store::Store& store, const std::string& sweep_id, const std::string& db, const std::string& report) {
  readers::QueryOptions options;
  options.filter.sweeps = {sweep_id};
  // A language model's throughput in tokens too, and a generation's prefill and per-token decode
  // latency (docs/language-models.md), where the sweep has them.
  // Compiled configurations: the compile time (the first iteration's) and the accuracy gate's worst
  // deviation; `inaccurate` counts runs that failed the gate (docs/compiler.md).
  options.metrics = {"epoch_time", "samples_per_s", "tokens_per_s", "prefill_time", "decode_latency",
                     "decode_p99", "peak_memory",   "mfu",          "compile_time", "accuracy_deviation"};
  auto plain = readers::query(store.database(), options);
  for (const char* optional : {"tokens_per_s", "prefill_ms", "decode_p50_ms", "decode_p99_ms", "accuracy_deviation"}) {
    const auto column = readers::column_of(plain, optional);
    if (std::any_of(plain.rows.begin(), plain.rows.end(), [&](const auto& row) { return !row[column].is_null(); })) {
      continue;
    }
    plain.columns.erase(plain.columns.begin() + static_cast<std::ptrdiff_t>(column));
    for (auto& row : plain.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(column));
  }
  options.metrics.clear();
  std::cout << "\nPer-configuration medians (sweep " << sweep_id << "):\n"
            << render(plain, Format::table, terminal_width());
  // A comparison is printed when some configuration has both sides.
  const auto print_comparison = [&](const std::string& axis, const std::string& title) {
    options.compare = axis;
    const auto compared = readers::query(store.database(), options);
    const auto speedup = readers::column_of(compared, "speedup");
    if (std::any_of(compared.rows.begin(), compared.rows.end(),
                    [&](const auto& row) { return !row[speedup].is_null(); })) {
      std::cout << "\n" << title << "\n" << render(compared, Format::table, terminal_width());
    }
  };
  print_comparison("mode", "Compiled vs eager (speedup = eager time / compiled time, 95% bootstrap interval):");
  const auto data = readers::column_of(plain, "data");
  if (std::any_of(plain.rows.begin(), plain.rows.end(), [&](const auto& row) { return row[data] != "synthetic"; })) {
    print_comparison("data=synthetic,*",
                     "Real vs synthetic data (speedup = synthetic time / real-data time; input_stall = the "
                     "fraction of an epoch spent waiting for batches):");
  }
  std::cout << "\nStored in " << db << "; ask again with: torchsweep query --db " << db << " --sweep " << sweep_id
            << " --compare mode\n";
  if (report.empty()) return;
  readers::ReportOptions report_options;
  report_options.filter.sweeps = {sweep_id};
  report_options.store_path = db;
  readers::write_report(store.database(), report_options, report);
  std::cout << "Report (charts, history, reproducing commands): " << report << "\n";
}

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

struct LocalSweepSettings {
  std::string sweep, db = "torchsweep.db", work_dir, peak_probe = "cached", report;
  double budget_s = 0;
  bool no_report = false;
  std::vector<std::string> runners, data_roots, model_roots;
  std::map<std::string, std::filesystem::path> environments;
  bool verbose = false, keep_job_dirs = false;
  // calibrate only
  int64_t rounds = 0;
  std::size_t night_runs = readers::NoiseOptions{}.night_runs;
  ClientSettings client;  // with --coordinator: the calibration runs on that cluster
  int64_t timeout_s = 7 * 24 * 3600;
};

// calibrate --coordinator: the calibration submitted to a cluster, waited
// for, its noise read from the store read-only and recorded by the
// coordinator, the store's one writer.
int calibrate_on_cluster(const LocalSweepSettings& settings, const nlohmann::json& spec) {
  const auto submitted = request(
      settings.client,
      wire::make_message("submit", {{"sweep", spec}, {"origin", settings.sweep}, {"submitter", submitter_name()}}));
  const auto sweep_id = submitted.at("sweep_id").get<std::string>();
  std::fprintf(stderr, "calibration %s submitted to %s: %lld jobs; waiting for them\n", sweep_id.c_str(),
               settings.client.coordinator.c_str(), static_cast<long long>(submitted.at("jobs").get<int64_t>()));
  wait_for_sweep(settings.client, sweep_id, std::chrono::seconds(settings.timeout_s));
  auto database = store::open_read_only(settings.db);
  const auto records = print_noise(database, sweep_id, settings.night_runs);
  request(settings.client, wire::make_message("record_calibration", {{"sweep", sweep_id},
                                                                     {"night_runs", settings.night_runs},
                                                                     {"alpha", RegressionRule{}.alpha},
                                                                     {"configurations", records}}));
  std::cout << "\nRecorded by the coordinator in " << settings.db << " (torchsweep query --calibrations)\n";
  const auto status = request(settings.client, wire::make_message("status", {{"sweep", sweep_id}}));
  const auto failed = status.at("sweeps").at(0).at("jobs").value("failed", int64_t{0});
  if (failed > 0) {
    std::fprintf(stderr, "%lld jobs of the calibration failed: torchsweep export --db %s --sweep %s --include-failed\n",
                 static_cast<long long>(failed), settings.db.c_str(), sweep_id.c_str());
    return exit_code::run_failed;
  }
  return exit_code::ok;
}

// `run` and `calibrate`: a coordinator, one local agent and the store in
// this process, the sweep submitted to them; `calibrate` first makes every
// configuration run `--rounds` times.
Command add_local_sweep_command(CLI::App* command, bool calibrate) {
  auto settings = std::make_shared<LocalSweepSettings>();
  command->add_option("sweep", settings->sweep, "sweep file (YAML or JSON)")->required();
  command->add_option("--db", settings->db, "the SQLite store (created if missing)")->capture_default_str();
  if (calibrate) {
    command
        ->add_option(
            "--rounds", settings->rounds,
            "identical runs of each configuration (separate processes); default: the sweep's calibration block")
        ->check(CLI::Range(int64_t{2}, int64_t{10000}));
    command->add_option("--night-runs", settings->night_runs, "runs a night in the A/A pairs of the false-alarm rate")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{2}, std::size_t{10000}));
    add_client_options(command, settings->client);
    command->add_option("--timeout-s", settings->timeout_s, "with --coordinator: how long to wait for the calibration")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  } else {
    command->add_option("--report", settings->report,
                        "where the HTML report goes (default: beside the store, DB.report.html)");
    command->add_flag("--no-report", settings->no_report, "write no HTML report");
  }
  command->add_option("--runner", settings->runners,
                      "NAME=PATH: an executable honouring the worker contract (repeatable)");
  command->add_option("--work-dir", settings->work_dir, "job directories (default: $TMPDIR/torchsweep-agent-local)");
  command->add_flag("--keep-job-dirs", settings->keep_job_dirs, "keep the directories of successful jobs too");
  command
      ->add_option("--budget-s", settings->budget_s,
                   "seconds the sweep may take: then its unfinished jobs are cancelled and what finished is "
                   "reported (default: no limit)")
      ->check(CLI::PositiveNumber);
  add_peak_probe_option(command, settings->peak_probe);
  add_data_root_option(command, settings->data_roots);
  add_model_path_option(command, settings->model_roots);
  add_environment_option(command, settings->environments);
  command->add_flag("--verbose", settings->verbose, "log the coordinator's and the agent's work (info level)");
  return [settings, calibrate, command] {
    auto spec = sweep::read_document(settings->sweep);
    if (calibrate) {
      // A/A: every configuration the same way, round after round (the sweep's calibration block, docs/noise.md).
      if (settings->rounds > 0) {
        spec.erase("repeats");
        spec["calibration"]["rounds"] = settings->rounds;
      } else if (!spec.contains("calibration")) {
        throw InvalidInput("--rounds", "the sweep has no calibration block: give the rounds");
      }
      if (command->count("--coordinator") > 0) return calibrate_on_cluster(*settings, spec);
      if (spec.at("calibration").value("nodes", 1) > 1) {
        throw InvalidInput("calibration.nodes", "without --coordinator calibrate runs one local agent: give the " +
                                                    spec.at("calibration").at("nodes").dump() +
                                                    " nodes' coordinator with --coordinator");
      }
    }
    // Bad files, and data folders or models the local agent may not read, fail here, before anything is created.
    const std::vector<std::filesystem::path> data_roots(settings->data_roots.begin(), settings->data_roots.end());
    const std::vector<std::filesystem::path> model_roots(settings->model_roots.begin(), settings->model_roots.end());
    for (const auto& job : sweep::expand(spec, settings->sweep).jobs) {
      agent::with_model_root(agent::with_data_path(job.document, data_roots), model_roots);
    }
    if (!settings->verbose) log::set_level(log::Level::warn);
    store::Store store(settings->db);
    boost::asio::io_context io;
    coordinator::CoordinatorOptions coordinator_options;
    coordinator_options.listen = {"127.0.0.1", 0};
    coordinator_options.resume_unfinished = false;  // run runs the sweep it was given, nothing else
    // A fresh token for this run: other local processes cannot join it.
    coordinator_options.token = wire::random_nonce();
    coordinator::Coordinator server(io, coordinator_options, store);
    server.start();
    agent::AgentOptions agent_options;
    agent_options.coordinator = {"127.0.0.1", server.port()};
    agent_options.name = "local";
    agent_options.token = coordinator_options.token;
    agent_options.work_directory = settings->work_dir;
    agent_options.keep_job_directories = settings->keep_job_dirs;
    agent_options.data_roots = data_roots;
    agent_options.model_roots = model_roots;
    agent_options.environments = settings->environments;
    agent_options.peak_probe = agent::parse_peak_probe(settings->peak_probe, "--peak-probe");
    for (const auto& runner : settings->runners) add_key_value(agent_options.runners, runner, "--runner");
    agent::Agent local(io, agent_options);
    local.start();

    // Checked against what the local agent's runners run: it has not said hello yet.
    const auto submission = server.requests().submit(spec, settings->sweep, submitter_name(), {local.capabilities()});
    std::fprintf(stderr, "sweep %s: %zu jobs (%zu configurations); store %s\n", submission.sweep_id.c_str(),
                 submission.jobs, submission.configurations, settings->db.c_str());
    ProgressReport progress(submission.jobs, store);
    const auto finish = [&] {
      progress.close();
      server.stop();
      local.stop();
      io.stop();
    };
    bool finished = false;
    server.on_event([&](const JobEvent& event) {
      if (event.sweep_id != submission.sweep_id) return;
      progress.on_event(event);
      // Checked once the event's handling is over: an adaptive sweep may
      // add a round right after what looked like its last job.
      boost::asio::post(io, [&] {
        if (progress.complete() && !finished) {
          finished = true;
          finish();
        }
      });
    });
    bool interrupted = false;
    const auto signals = stop_on_signals(io, [&] {
      interrupted = true;
      server.requests().cancel(submission.sweep_id, "");
      finish();
    });
    // A time-boxed run (a lent GPU machine, a nightly window): what the budget
    // did not reach is cancelled, not failed, and what finished is reported.
    std::size_t over_budget = 0;
    boost::asio::steady_timer budget(io);
    if (settings->budget_s > 0) {
      budget.expires_after(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings->budget_s)));
      budget.async_wait([&](const boost::system::error_code& error) {
        if (error || finished) return;
        over_budget = server.requests().cancel(submission.sweep_id, "");
        std::fprintf(stderr, "\nbudget of %s spent: %zu unfinished jobs cancelled\n",
                     duration_text(settings->budget_s).c_str(), over_budget);
      });
    }
    if (submission.jobs == 0) finish();
    io.run();
    if (interrupted) {
      std::fprintf(stderr, "interrupted: sweep %s cancelled; %zu of %zu jobs had finished (%zu failed)\n",
                   submission.sweep_id.c_str(), progress.finished() - progress.cancelled(), submission.jobs,
                   progress.failed());
      return exit_code::run_failed;
    }
    if (calibrate) {
      store.record_calibration(submission.sweep_id, static_cast<int64_t>(settings->night_runs), RegressionRule{}.alpha,
                               print_noise(store.database(), submission.sweep_id, settings->night_runs));
      std::cout << "\nRecorded in " << settings->db
                << " (torchsweep query --calibrations); ask again with: torchsweep query --db " << settings->db
                << " --sweep " << submission.sweep_id << " --noise\n";
    } else {
      print_results(store, submission.sweep_id, settings->db,
                    settings->no_report        ? std::string()
                    : settings->report.empty() ? report_beside(settings->db)
                                               : settings->report);
    }
    if (over_budget > 0) {
      std::fprintf(stderr, "%zu of %zu jobs finished within the budget; the rest were cancelled\n",
                   progress.finished() - progress.cancelled(), submission.jobs);
    }
    if (progress.failed() > 0) {
      std::fprintf(stderr,
                   "%zu of %zu jobs failed; their reasons: torchsweep export --db %s --sweep %s "
                   "--include-failed, or the jobs table\n",
                   progress.failed(), submission.jobs, settings->db.c_str(), submission.sweep_id.c_str());
      return exit_code::run_failed;
    }
    return exit_code::ok;
  };
}

}  // namespace

Command add_run_command(CLI::App& app) {
  return add_local_sweep_command(
      app.add_subcommand("run",
                         "run a sweep on this machine: coordinator, one local agent and the store in one command"),
      false);
}

Command add_calibrate_command(CLI::App& app) {
  return add_local_sweep_command(
      app.add_subcommand("calibrate",
                         "A/A calibration on this machine: each configuration of the sweep run --rounds times as "
                         "identical jobs, then its noise by level and the false-alarm rate of the regression rule "
                         "(docs/noise.md)"),
      true);
}

}  // namespace ts::cli
