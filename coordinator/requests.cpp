#include "coordinator/requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <span>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/log.hpp"
#include "shared/sweep/runnable.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/timestamp.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::coordinator {

namespace {

// cpu-quick-20261130T071500Z-3f2a: readable, sortable, unique enough that
// two submissions in the same second do not collide.
std::string new_sweep_id(const std::string& name) {
  auto stamp = utc_timestamp();  // 2026-11-30T07:15:00.123Z
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  stamp = stamp.substr(0, 15) + "Z";
  std::random_device entropy;
  return fmt::format("{}-{}-{:04x}", name, stamp, entropy() & 0xffffu);
}

}  // namespace

SubmissionContext Requests::submission_context() {
  return {store_.agent_capabilities(), store::model_lists(store_.database())};
}

PreparedSubmission prepare_submission(const nlohmann::json& spec, const std::string& origin,
                                      const std::string& submitter, const SubmissionContext& context) {
  PreparedSubmission prepared{sweep::expand(spec, origin), {}, {}, {}};
  const auto& sweep = prepared.sweep;
  // A model no runner of its name runs is refused now, not at 3 a.m.
  prepared.warnings = sweep::check_runnable(
      sweep, sweep::known_runners(context.capabilities, context.lists),
      context.complete ? "as this run's agent reported" : "as the agents that ever registered reported",
      context.complete);
  prepared.record = {new_sweep_id(sweep.name), sweep.name,     sweep.spec, sweep.tags, submitter,
                     sweep.priority,           utc_timestamp()};
  prepared.jobs.reserve(sweep.jobs.size());
  for (const auto& planned : sweep.jobs) {
    auto document = planned.document;
    const auto job_id = fmt::format("{}/{:04}", prepared.record.sweep_id, planned.ordinal);
    document["job_id"] = job_id;
    prepared.jobs.push_back({job_id, planned.ordinal, planned.config_key, planned.repeat,
                             job_fields::get<std::string>(document, "runner"),
                             job_fields::get<int64_t>(document, "gpus"), std::move(document), sweep.max_attempts,
                             "measurement", sweep::stored_pair_key(planned.config_key, sweep.pair_axis)});
  }
  return prepared;
}

SweepSettings Requests::store_sweep(const PreparedSubmission& prepared) {
  for (const auto& warning : prepared.warnings) log::warn("sweep {}: {}", prepared.sweep.name, warning);
  return SweepSettings::of(store_.insert_sweep(prepared.record), prepared.sweep);
}

void Requests::queue_jobs(const PreparedSubmission& prepared, std::size_t begin, std::size_t end,
                          const SweepSettings& settings) {
  const std::span jobs(prepared.jobs.data() + begin, end - begin);
  store_.insert_jobs(prepared.record.sweep_id, jobs, prepared.record.created_at);
  for (const auto& job : jobs) {
    registry_.add({job.job_id, prepared.record.sweep_id, job.config_key, job.runner, "queued", "", job.ordinal,
                   job.repeat, job.gpus, 0, job.max_attempts, job.document},
                  settings);
  }
}

Submission Requests::submitted(const PreparedSubmission& prepared) {
  const auto& sweep = prepared.sweep;
  log::info("sweep {} submitted: {} jobs ({} configurations x {} repeats)", prepared.record.sweep_id,
            prepared.jobs.size(), sweep.configurations, sweep.repeats);
  registry_.dispatch();
  return {prepared.record.sweep_id, sweep.name, prepared.jobs.size(), sweep.configurations, prepared.warnings};
}

Submission Requests::submit(const nlohmann::json& spec, const std::string& origin, const std::string& submitter,
                            const std::optional<nlohmann::json>& only_agent) {
  const auto prepared =
      prepare_submission(spec, origin, submitter,
                         only_agent ? SubmissionContext{{*only_agent}, store::model_lists(store_.database()), true}
                                    : submission_context());
  batch_.open();
  const auto settings = store_sweep(prepared);
  queue_jobs(prepared, 0, prepared.jobs.size(), settings);
  return submitted(prepared);
}

nlohmann::json submitted_message(const Submission& submitted) {
  return wire::make_message("submitted", {{"sweep_id", submitted.sweep_id},
                                          {"name", submitted.name},
                                          {"jobs", submitted.jobs},
                                          {"configurations", submitted.configurations},
                                          {"warnings", submitted.warnings}});
}

asio::awaitable<Submission> Requests::submit_in_turns(const nlohmann::json& spec, const std::string& origin,
                                                      const std::string& submitter, asio::thread_pool& pool,
                                                      Turns& turns) {
  SubmissionContext context;
  co_await turns.run([&] { context = submission_context(); });
  // Expanded and each job validated off the loop.
  auto prepared = co_await asio::co_spawn(
      pool,
      [&]() -> asio::awaitable<PreparedSubmission> { co_return prepare_submission(spec, origin, submitter, context); },
      asio::use_awaitable);
  // Stored and queued a chunk a turn, in one transaction: committed whole.
  batch_.hold();
  try {
    SweepSettings settings;
    co_await turns.run([&] { settings = store_sweep(prepared); });
    for (std::size_t begin = 0; begin < prepared.jobs.size(); begin += jobs_per_turn) {
      const auto end = std::min(prepared.jobs.size(), begin + jobs_per_turn);
      co_await turns.run([&] { queue_jobs(prepared, begin, end, settings); });
    }
  } catch (...) {
    batch_.release();
    throw;
  }
  batch_.release();
  co_return submitted(prepared);
}

std::size_t Requests::cancel(const std::string& sweep, const std::string& job, store::Store::CancelScope scope) {
  return registry_.cancel(cancelled_sweep_id(sweep, job), job, scope);
}

std::string Requests::cancelled_sweep_id(const std::string& sweep, const std::string& job) {
  if (sweep.empty() && !store_.job(job)) throw InvalidInput("job", "no job with id '" + job + "'");
  return sweep.empty() ? std::string() : sweep_id_of(sweep);
}

asio::awaitable<std::size_t> Requests::cancel_in_turns(const std::string& sweep, const std::string& job, Turns& turns) {
  std::string sweep_id;
  std::vector<std::pair<std::string, std::string>> cancelled;
  co_await turns.run([&] {
    sweep_id = cancelled_sweep_id(sweep, job);
    cancelled = registry_.cancellable(sweep_id, job, store::Store::CancelScope::unfinished);
  });
  // Cancelled a chunk a turn, in one transaction: committed whole.
  const auto now = utc_timestamp();
  batch_.hold();
  try {
    for (std::size_t begin = 0; begin < cancelled.size(); begin += jobs_per_turn) {
      const auto chunk = std::span(cancelled).subspan(begin, std::min(jobs_per_turn, cancelled.size() - begin));
      co_await turns.run([&] { registry_.cancel_some(chunk, now); });
    }
    std::size_t count = 0;
    co_await turns.run([&] { count = registry_.cancel_closed(sweep_id, job, cancelled.size(), now); });
    batch_.release();
    co_return count;
  } catch (...) {
    batch_.release();
    throw;
  }
}

std::pair<std::string, std::vector<std::string>> Requests::rerun(const std::string& sweep,
                                                                 const std::vector<std::string>& configurations,
                                                                 int64_t runs) {
  const auto sweep_id = sweep_id_of(sweep);
  const auto summary = store_.sweeps(sweep_id).at(0);
  const auto settings = SweepSettings::of(summary.sequence, sweep::parse(summary.spec, "the stored sweep " + sweep_id));
  // An adaptive sweep's rule would count the reruns as rounds of its pairs.
  if (settings.adaptive) throw InvalidInput("sweep", "sweep " + sweep_id + " is adaptive: its rounds are not rerun");
  std::map<std::string, store::StoredJob> newest;  // configuration key -> its newest job
  int64_t next_ordinal = 0;
  for (auto& job : store_.sweep_jobs(sweep_id)) {
    next_ordinal = std::max(next_ordinal, job.ordinal + 1);
    auto& last = newest[job.config_key];
    if (last.job_id.empty() || job.repeat >= last.repeat) last = std::move(job);
  }
  std::vector<store::JobRecord> added;
  for (std::size_t c = 0; c < configurations.size(); ++c) {
    const auto found = newest.find(configurations[c]);
    if (found == newest.end()) {
      throw InvalidInput("configurations[" + std::to_string(c) + "]",
                         "sweep " + sweep_id + " has no configuration '" + configurations[c] + "'");
    }
    const auto& last = found->second;
    for (int64_t run = 0; run < runs; ++run) {
      auto document = last.document;
      const auto job_id = fmt::format("{}/{:04}", sweep_id, next_ordinal);
      document["job_id"] = job_id;
      added.push_back({job_id, next_ordinal++, last.config_key, last.repeat + 1 + run, last.runner, last.gpus, document,
                       last.max_attempts, "confirmation", sweep::stored_pair_key(last.config_key, settings.pair_axis)});
    }
  }
  registry_.add_runs(sweep_id, added, settings);
  registry_.dispatch();
  std::vector<std::string> ids;
  for (const auto& job : added) ids.push_back(job.job_id);
  log::info("sweep {}: {} confirmation runs queued", sweep_id, ids.size());
  return {sweep_id, ids};
}

asio::awaitable<nlohmann::json> Requests::answer(const std::string& type, const nlohmann::json& request,
                                                 asio::thread_pool& pool, Turns& turns) {
  if (type == "submit") {
    co_return submitted_message(co_await submit_in_turns(
        request.at("sweep"), request.value("origin", "submitted sweep"), request.value("submitter", ""), pool, turns));
  }
  if (type == "cancel") {
    const auto jobs = co_await cancel_in_turns(request.value("sweep", ""), request.value("job", ""), turns);
    co_return wire::make_message("cancelled", {{"jobs", jobs}});
  }
  co_return answer_at_once(type, request);
}

nlohmann::json Requests::answer_at_once(const std::string& type, const nlohmann::json& request) {
  if (type == "status") return status_reply(request.value("sweep", ""), request.value("agents", true));
  if (type == "rerun") {
    const auto [sweep_id, jobs] = rerun(request.at("sweep"), request.at("configurations"), request.at("runs"));
    return wire::make_message("rerun_queued", {{"sweep_id", sweep_id}, {"jobs", jobs}});
  }
  if (type == "record_calibration") {
    const auto sweep_id = sweep_id_of(request.at("sweep"));
    const auto summary = store_.sweeps(sweep_id).at(0);
    if (summary.state == "active") throw InvalidInput("sweep", "sweep " + sweep_id + " is still running");
    if (!summary.spec.contains("calibration"))
      throw InvalidInput("sweep", "sweep " + sweep_id + " is not a calibration (no calibration block)");
    const auto rows = request.at("configurations").get<std::vector<nlohmann::json>>();
    batch_.open();
    const auto rounds = sweep::parse(summary.spec, "the stored sweep " + sweep_id).repeats;
    store_.record_calibration(sweep_id, rounds, request.at("night_runs").get<int64_t>(),
                              request.at("alpha").get<double>(), rows);
    log::info("sweep {}: calibration of {} configurations recorded", sweep_id, rows.size());
    return wire::make_message("calibration_recorded", {{"sweep_id", sweep_id}, {"configurations", rows.size()}});
  }
  if (type == "record_regressions") {
    const auto rows = request.at("regressions").get<std::vector<nlohmann::json>>();
    for (const auto& row : rows) {
      for (const char* field : {"sweep_id", "baseline_sweep_id"}) {
        const auto id = row.at(field).get<std::string>();
        if (store_.sweeps(id).empty()) throw InvalidInput(field, "no sweep with id '" + id + "'");
      }
    }
    batch_.open();
    store_.record_regressions(rows);
    log::info("{} regressions recorded", rows.size());
    return wire::make_message("regressions_recorded", {{"regressions", rows.size()}});
  }
  throw InvalidInput("type", "unexpected message type '" + type + "' from a client");
}

std::string Requests::sweep_id_of(const std::string& id_or_name) {
  const auto found = store_.resolve_sweep(id_or_name);
  if (!found) throw InvalidInput("sweep", "no sweep with id or name '" + id_or_name + "'");
  return *found;
}

nlohmann::json Requests::status_reply(const std::string& sweep, bool with_agents) {
  // The sweep asked for, or every active sweep and the last few finished ones.
  nlohmann::json sweeps = nlohmann::json::array();
  for (const auto& summary : store_.sweeps(sweep.empty() ? std::string() : sweep_id_of(sweep), finished_sweeps_shown)) {
    sweeps.push_back({{"sweep_id", summary.sweep_id},
                      {"name", summary.name},
                      {"state", summary.state},
                      {"priority", summary.priority},
                      {"created_at", summary.created_at},
                      {"total", summary.total},
                      {"jobs", summary.jobs},
                      {"cost", summary.cost ? nlohmann::json(*summary.cost) : nlohmann::json(nullptr)}});
    if (auto pairs = store_.adaptive_pairs(summary.sweep_id); !pairs.empty()) sweeps.back()["adaptive"] = pairs;
  }
  if (!with_agents) return wire::make_message("status_reply", {{"sweeps", sweeps}});
  nlohmann::json agents = nlohmann::json::array();
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [name, session] : agents_.all()) {
    auto entry = session.described;
    entry["connected_s"] = std::chrono::duration<double>(now - session.connected_at).count();
    entry["running"] = registry_.running_on(name);
    agents.push_back(std::move(entry));
  }
  return wire::make_message("status_reply",
                            {{"sweeps", sweeps}, {"agents", agents}, {"joining", joining_.describe(now)}});
}

}  // namespace ts::coordinator
