#include "coordinator/metrics.hpp"

#include "shared/errors.hpp"

namespace ts::coordinator {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// Seconds, from a millisecond dispatch to a night in the queue.
const prometheus::Histogram::BucketBoundaries& latency_buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets{0.001, 0.005, 0.01, 0.05, 0.1,  0.5,  1,
                                                               5,     10,    60,   300,  1800, 3600, 14400};
  return buckets;
}

std::unique_ptr<prometheus::Exposer> bind(const wire::Endpoint& listen) {
  try {
    // IPv6 literals go in brackets, as civetweb reads them.
    const auto host = listen.host.find(':') != std::string::npos ? "[" + listen.host + "]" : listen.host;
    return std::make_unique<prometheus::Exposer>(host + ":" + std::to_string(listen.port), 2);
  } catch (const std::exception& error) {
    throw InvalidInput("--metrics-listen", "cannot serve /metrics on " + listen.text() + ": " + error.what());
  }
}

// Brings `family`'s series to `wanted` (a key -> labels and value), adding
// and removing series.
template <class Key>
void reconcile(prometheus::Family<prometheus::Gauge>& family, std::map<Key, prometheus::Gauge*>& gauges,
               const std::map<Key, std::pair<prometheus::Labels, double>>& wanted) {
  for (auto it = gauges.begin(); it != gauges.end();) {
    if (wanted.contains(it->first)) {
      ++it;
    } else {
      family.Remove(it->second);
      it = gauges.erase(it);
    }
  }
  for (const auto& [key, series] : wanted) {
    auto& gauge = gauges[key];
    if (gauge == nullptr) gauge = &family.Add(series.first);
    gauge->Set(series.second);
  }
}

}  // namespace

Metrics::Metrics(const wire::Endpoint& listen)
    : registry_(std::make_shared<prometheus::Registry>()),
      exposer_(bind(listen)),
      agents_(BuildGauge().Name("torchsweep_agents_connected").Help("Agents connected now").Register(*registry_)),
      agents_by_label_(BuildGauge()
                           .Name("torchsweep_agents_connected_by_label")
                           .Help("Agents connected now, by each of their labels (label=\"KEY=VALUE\")")
                           .Register(*registry_)),
      heartbeat_age_(BuildGauge()
                         .Name("torchsweep_agent_heartbeat_age_seconds")
                         .Help("Seconds since the coordinator last heard from each connected agent")
                         .Register(*registry_)),
      jobs_(BuildGauge()
                .Name("torchsweep_jobs")
                .Help("Jobs of each current sweep by state (queued, running, done, failed, cancelled)")
                .Register(*registry_)),
      store_bytes_(BuildGauge()
                       .Name("torchsweep_store_bytes")
                       .Help("Size of the SQLite store on disk, with its write-ahead log")
                       .Register(*registry_)
                       .Add({})),
      attempts_started_(BuildCounter()
                            .Name("torchsweep_attempts_started_total")
                            .Help("Job attempts assigned to agents")
                            .Register(*registry_)
                            .Add({})),
      attempts_retried_(BuildCounter()
                            .Name("torchsweep_attempts_retried_total")
                            .Help("Attempts that ended without a result and were queued again")
                            .Register(*registry_)
                            .Add({})),
      outcomes_(BuildCounter()
                    .Name("torchsweep_jobs_finished_total")
                    .Help("Jobs that reached a final state, by state")
                    .Register(*registry_)),
      results_ingested_(BuildCounter()
                            .Name("torchsweep_results_ingested_total")
                            .Help("Result and failure reports from agents stored")
                            .Register(*registry_)
                            .Add({})),
      ingest_latency_(BuildHistogram()
                          .Name("torchsweep_ingest_latency_seconds")
                          .Help("From a result's arrival to its commit in the store")
                          .Register(*registry_)
                          .Add({}, latency_buckets())),
      dispatch_latency_(BuildHistogram()
                            .Name("torchsweep_dispatch_latency_seconds")
                            .Help("From a job's queueing to its assignment to an agent")
                            .Register(*registry_)
                            .Add({}, latency_buckets())),
      loop_lag_(BuildHistogram()
                    .Name("torchsweep_event_loop_lag_seconds")
                    .Help("How late the coordinator's event loop ran a timer that was due")
                    .Register(*registry_)
                    .Add({}, latency_buckets())),
      loop_lag_max_(BuildGauge()
                        .Name("torchsweep_event_loop_lag_max_seconds")
                        .Help("The longest event-loop lag since the coordinator started")
                        .Register(*registry_)
                        .Add({})) {
  exposer_->RegisterCollectable(registry_);
}

std::uint16_t Metrics::port() const { return static_cast<std::uint16_t>(exposer_->GetListeningPorts().at(0)); }

void Metrics::job_event(const JobEvent& event) {
  switch (event.kind) {
    case JobEvent::Kind::started:
      attempts_started_.Increment();
      dispatch_latency_.Observe(event.queued_seconds);
      break;
    case JobEvent::Kind::requeued:
      attempts_retried_.Increment();
      break;
    case JobEvent::Kind::done:
      outcomes_.Add({{"state", "done"}}).Increment();
      break;
    case JobEvent::Kind::failed:
      outcomes_.Add({{"state", "failed"}}).Increment();
      break;
    case JobEvent::Kind::cancelled:
      outcomes_.Add({{"state", "cancelled"}}).Increment();
      break;
    case JobEvent::Kind::progress:
    case JobEvent::Kind::added:
      break;
  }
}

void Metrics::result_ingested(std::chrono::duration<double> latency) {
  results_ingested_.Increment();
  ingest_latency_.Observe(latency.count());
}

void Metrics::loop_lag(std::chrono::duration<double> lag) {
  loop_lag_.Observe(lag.count());
  if (lag.count() > loop_lag_max_.Value()) loop_lag_max_.Set(lag.count());
}

void Metrics::refresh_agents(const std::vector<AgentSample>& agents) {
  std::map<std::string, std::pair<prometheus::Labels, double>> ages, by_label;
  for (const auto& agent : agents) {
    ages[agent.name] = {{{"agent", agent.name}}, agent.heartbeat_age_s};
    for (const auto& [key, value] : agent.labels.items()) {
      const auto pair = key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
      auto& series = by_label[pair];
      series.first = {{"label", pair}};
      series.second += 1;
    }
  }
  agents_.Add({}).Set(static_cast<double>(agents.size()));
  reconcile(heartbeat_age_, agent_gauges_, ages);
  reconcile(agents_by_label_, label_gauges_, by_label);
}

void Metrics::refresh_jobs(const std::map<std::string, std::map<std::string, int64_t>>& jobs) {
  std::map<std::pair<std::string, std::string>, std::pair<prometheus::Labels, double>> wanted;
  for (const auto& [sweep, states] : jobs) {
    for (const auto& [state, count] : states) {
      wanted[{sweep, state}] = {{{"sweep", sweep}, {"state", state}}, static_cast<double>(count)};
    }
  }
  reconcile(jobs_, job_gauges_, wanted);
}

void Metrics::refresh_store_bytes(int64_t bytes) { store_bytes_.Set(static_cast<double>(bytes)); }

}  // namespace ts::coordinator
