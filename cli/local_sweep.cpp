#include "cli/local_sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdio>
#include <filesystem>

#include "agent/agent.hpp"
#include "agent/allowed_roots.hpp"
#include "cli/client.hpp"
#include "cli/key_value.hpp"
#include "cli/shutdown.hpp"
#include "coordinator/coordinator.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/wire/authentication.hpp"

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

}  // namespace

void add_local_agent_options(CLI::App* command, LocalSweepSettings& settings) {
  command->add_option("--runner", settings.runners,
                      "NAME=PATH: an executable honouring the worker contract (repeatable)");
  command->add_option("--python-runner", settings.python_runners,
                      "NAME=SCRIPT: a Python script honouring the worker contract, started by the interpreter of "
                      "each environment (--env) as the installed Python runners are (repeatable)");
  command->add_flag("--no-default-runners", settings.no_default_runners,
                    "the local agent registers only the --runner, --python-runner and --env ones, not those installed "
                    "beside torchsweep");
  command->add_option("--work-dir", settings.work_dir, "job directories (default: $TMPDIR/torchsweep-agent-local)");
  command->add_flag("--keep-job-dirs", settings.keep_job_dirs, "keep the directories of successful jobs too");
  add_peak_probe_option(command, settings.peak_probe);
  add_data_root_option(command, settings.data_roots);
  add_model_path_option(command, settings.model_roots);
  add_environment_option(command, settings.environments);
  add_price_option(command, settings.prices);
  command->add_flag("--verbose", settings.verbose, "log the coordinator's and the agent's work (info level)");
}

void add_local_sweep_options(CLI::App* command, LocalSweepSettings& settings) {
  command->add_option("sweep", settings.sweep, "sweep file (YAML or JSON)")->required();
  command->add_option("--db", settings.db, "the SQLite store (created if missing)")->capture_default_str();
  command
      ->add_option("--budget-s", settings.budget_s,
                   "seconds the sweep may take: then its jobs not yet started are cancelled, the jobs in flight "
                   "may finish within --budget-grace-s, and what finished is reported (default: no limit)")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--budget-grace-s", settings.budget_grace_s,
                   "seconds the jobs in flight at the budget's end may still take before they are cancelled too")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_local_agent_options(command, settings);
}

void migrate_for_local_agent(const std::string& db) {
  if (std::filesystem::exists(db)) store::Store{db};
}

int run_local_sweep(const LocalSweepSettings& settings, const nlohmann::json& spec,
                    const std::function<void(store::Store&, const std::string&)>& report) {
  // Bad files, and data folders or models the local agent may not read, fail here, before anything is created.
  const std::vector<std::filesystem::path> data_roots(settings.data_roots.begin(), settings.data_roots.end());
  const std::vector<std::filesystem::path> model_roots(settings.model_roots.begin(), settings.model_roots.end());
  for (const auto& job : sweep::expand(spec, settings.sweep).jobs) {
    agent::with_model_root(agent::with_data_path(job.document, data_roots), model_roots);
  }
  const auto prices = parse_prices(settings.prices);
  if (!settings.verbose) log::set_level(log::Level::warn);
  store::Store store(settings.db);
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
  agent_options.work_directory = settings.work_dir;
  agent_options.keep_job_directories = settings.keep_job_dirs;
  agent_options.data_roots = data_roots;
  agent_options.model_roots = model_roots;
  agent_options.environments = settings.environments;
  agent_options.discover_runners = !settings.no_default_runners;
  agent_options.price_per_hour = prices;
  agent_options.peak_probe = agent::parse_peak_probe(settings.peak_probe, "--peak-probe");
  for (const auto& runner : settings.runners) add_key_value(agent_options.runners, runner, "--runner");
  for (const auto& runner : settings.python_runners) {
    add_key_value(agent_options.python_runners, runner, "--python-runner");
  }
  agent::Agent local(io, agent_options);
  local.start();

  // Checked against what the local agent's runners run, and that alone: it has not said hello yet, and the agents
  // of earlier runs the store remembers will not run this one.
  const auto submission = server.requests().submit(spec, settings.sweep, submitter_name(), local.capabilities());
  std::fprintf(stderr, "sweep %s: %zu jobs (%zu configurations); store %s\n", submission.sweep_id.c_str(),
               submission.jobs, submission.configurations, settings.db.c_str());
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
  // did not start is cancelled, not failed; a job in flight has paid for
  // most of its run, so it may finish within the grace; what finished is
  // reported.
  std::size_t over_budget = 0;
  boost::asio::steady_timer budget(io);
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  if (settings.budget_s > 0) {
    budget.expires_after(seconds(settings.budget_s));
    budget.async_wait([&](const boost::system::error_code& error) {
      if (error || finished) return;
      over_budget = server.requests().cancel(submission.sweep_id, "", store::Store::CancelScope::unstarted);
      std::fprintf(stderr, "\nbudget of %s spent: %zu unstarted jobs cancelled; jobs in flight may finish within %s\n",
                   duration_text(settings.budget_s).c_str(), over_budget,
                   duration_text(settings.budget_grace_s).c_str());
      budget.expires_after(seconds(settings.budget_grace_s));
      budget.async_wait([&](const boost::system::error_code& grace_error) {
        if (grace_error || finished) return;
        const auto in_flight = server.requests().cancel(submission.sweep_id, "");
        over_budget += in_flight;
        if (in_flight > 0) std::fprintf(stderr, "\ngrace spent: %zu jobs in flight cancelled\n", in_flight);
      });
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
  report(store, submission.sweep_id);
  if (over_budget > 0) {
    std::fprintf(stderr, "%zu of %zu jobs finished within the budget; the rest were cancelled\n",
                 progress.finished() - progress.cancelled(), submission.jobs);
  }
  if (progress.failed() > 0) {
    std::fprintf(stderr,
                 "%zu of %zu jobs failed; their reasons: torchsweep export --db %s --sweep %s "
                 "--include-failed, or the jobs table\n",
                 progress.failed(), submission.jobs, settings.db.c_str(), submission.sweep_id.c_str());
    return exit_code::run_failed;
  }
  return exit_code::ok;
}

}  // namespace ts::cli
