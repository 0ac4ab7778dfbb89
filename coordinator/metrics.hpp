#pragma once
// The coordinator on the lab's Prometheus (docs/operations.md): /metrics on
// an opt-in address, served by prometheus-cpp's own HTTP threads. The
// coordinator's thread feeds it: counters and histograms as things happen,
// gauges (agents, jobs per sweep and state, store size) refreshed at every
// housekeeping tick, so a scrape reads them at most one heartbeat interval
// old. prometheus-cpp's metrics are atomic: the two threads share nothing else.
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "coordinator/job_registry.hpp"
#include "shared/wire/endpoint.hpp"

namespace ts::coordinator {

struct AgentSample {
  std::string name;
  nlohmann::json labels;  // the agent's hello labels, {"key": "value"}
  double heartbeat_age_s = 0;
};

class Metrics {
 public:
  // Binds `listen` at once (port 0: any free port); throws
  // ts::InvalidInput("--metrics-listen", ...) when it cannot.
  explicit Metrics(const wire::Endpoint& listen);
  std::uint16_t port() const;

  // Attempts started (with how long the job waited queued), retried, ended.
  void job_event(const JobEvent& event);
  // A result or failure report stored: from its arrival to its commit.
  void result_ingested(std::chrono::duration<double> latency);

  // How late the event loop ran a timer due now: the longest pause of
  // everything the coordinator's one thread does (a histogram and the
  // largest seen).
  void loop_lag(std::chrono::duration<double> lag);

  void refresh_agents(const std::vector<AgentSample>& agents);
  // sweep id -> state -> jobs, for the sweeps the store lists as current.
  void refresh_jobs(const std::map<std::string, std::map<std::string, int64_t>>& jobs);
  void refresh_store_bytes(int64_t bytes);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Gauge>& agents_;
  prometheus::Family<prometheus::Gauge>& agents_by_label_;
  prometheus::Family<prometheus::Gauge>& heartbeat_age_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Gauge& store_bytes_;
  prometheus::Counter& attempts_started_;
  prometheus::Counter& attempts_retried_;
  prometheus::Family<prometheus::Counter>& outcomes_;
  prometheus::Counter& results_ingested_;
  prometheus::Histogram& ingest_latency_;
  prometheus::Histogram& dispatch_latency_;
  prometheus::Histogram& loop_lag_;
  prometheus::Gauge& loop_lag_max_;
  // The gauges of the last refresh, removed when their agent, label or
  // sweep is gone.
  std::map<std::string, prometheus::Gauge*> agent_gauges_, label_gauges_;
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*> job_gauges_;
};

}  // namespace ts::coordinator
