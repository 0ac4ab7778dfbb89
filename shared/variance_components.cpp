#include "shared/variance_components.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

namespace ts::stats {

VarianceComponents estimate_variance_components(std::span<const ProcessSample> processes) {
  if (processes.empty()) throw std::invalid_argument("variance components: no process");
  // Each node's processes, and the sums the mean squares need.
  std::map<int, std::vector<const ProcessSample*>> by_node;
  double total = 0;
  int n = 0;
  for (const auto& process : processes) {
    if (process.values.empty()) throw std::invalid_argument("variance components: a process has no value");
    by_node[process.node].push_back(&process);
    total += std::accumulate(process.values.begin(), process.values.end(), 0.0);
    n += static_cast<int>(process.values.size());
  }
  VarianceComponents components;
  components.nodes = static_cast<int>(by_node.size());
  components.processes = static_cast<int>(processes.size());
  components.values = n;
  components.grand_mean = total / n;

  double ss_within = 0, ss_process = 0, ss_node = 0;
  double sum_nij2_over_ni = 0, sum_nij2 = 0, sum_ni2 = 0;
  for (const auto& [node, members] : by_node) {
    double node_total = 0;
    int node_n = 0;
    for (const auto* process : members) {
      node_total += std::accumulate(process->values.begin(), process->values.end(), 0.0);
      node_n += static_cast<int>(process->values.size());
    }
    const double node_mean = node_total / node_n;
    double nij2 = 0;
    for (const auto* process : members) {
      const auto nij = static_cast<double>(process->values.size());
      const double mean = std::accumulate(process->values.begin(), process->values.end(), 0.0) / nij;
      for (double value : process->values) ss_within += (value - mean) * (value - mean);
      ss_process += nij * (mean - node_mean) * (mean - node_mean);
      nij2 += nij * nij;
    }
    ss_node += node_n * (node_mean - components.grand_mean) * (node_mean - components.grand_mean);
    sum_nij2_over_ni += nij2 / node_n;
    sum_nij2 += nij2;
    sum_ni2 += static_cast<double>(node_n) * node_n;
  }
  const int h = components.nodes, p = components.processes;
  const double big_n = n;
  if (n > p) components.within = ss_within / (n - p);
  const double within = components.within.value_or(0);
  // Sokal and Rohlf's coefficients of the unbalanced nested design.
  if (p > h) {
    const double ms_process = ss_process / (p - h);
    const double n0 = (big_n - sum_nij2_over_ni) / (p - h);
    const double estimate = (ms_process - within) / n0;
    components.process_truncated = estimate < 0;
    components.process = std::max(0.0, estimate);
  }
  if (h > 1) {
    const double ms_node = ss_node / (h - 1);
    const double n0_process = (sum_nij2_over_ni - sum_nij2 / big_n) / (h - 1);
    const double n0_node = (big_n - sum_ni2 / big_n) / (h - 1);
    const double estimate = (ms_node - within - n0_process * components.process.value_or(0)) / n0_node;
    components.node_truncated = estimate < 0;
    components.node = std::max(0.0, estimate);
  }
  return components;
}

double VarianceComponents::variance_of_a_run_mean(int per_process, bool across_nodes) const {
  return process.value_or(0) + within.value_or(0) / std::max(1, per_process) + (across_nodes ? node.value_or(0) : 0);
}

}  // namespace ts::stats
