#include "shared/profiles/summary.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace ts::profiles {
namespace {

// One event's times once its nesting is known, in ns.
struct Timed {
  double total = 0, self = 0, device_total = 0, self_device = 0;
};

// Per name (and input shapes): what the rows sum.
struct Row {
  double calls = 0, self_cpu = 0, cpu_total = 0, self_device = 0, device_total = 0;
};

double duration(const ProfiledEvent& event) {
  return event.end_ns > event.start_ns ? static_cast<double>(event.end_ns - event.start_ns) : 0.0;
}

// Each host event's times: its children are the events it encloses on its
// thread (profiler_util.py's _populate_cpu_children); its kernels are those
// linked to its correlation id.
std::vector<Timed> nest(const std::vector<ProfiledEvent>& events) {
  std::vector<Timed> timed(events.size());
  std::vector<std::vector<std::size_t>> children(events.size());
  std::unordered_map<uint64_t, std::size_t> by_correlation;
  std::map<uint64_t, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& event = events[i];
    timed[i].total = duration(event);
    if (event.async && !event.on_device) timed[i].self = timed[i].total;  // nests nothing, in nothing
    if (event.on_device || event.async) continue;
    by_thread[event.thread].push_back(i);
    if (event.correlation != 0) by_correlation.emplace(event.correlation, i);
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& event = events[i];
    if (!event.on_device || event.linked_correlation == 0) continue;
    if (const auto host = by_correlation.find(event.linked_correlation); host != by_correlation.end()) {
      timed[host->second].self_device += duration(event);
    }
  }
  std::vector<std::size_t> order;  // parents before their children
  for (auto& [thread, indices] : by_thread) {
    std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
      return std::tuple(events[a].start_ns, -static_cast<int64_t>(events[a].end_ns)) <
             std::tuple(events[b].start_ns, -static_cast<int64_t>(events[b].end_ns));
    });
    std::vector<std::size_t> open;
    for (const auto i : indices) {
      while (!open.empty()) {
        const auto& parent = events[open.back()];
        if (events[i].start_ns >= parent.end_ns || events[i].end_ns > parent.end_ns) {
          open.pop_back();
        } else {
          children[open.back()].push_back(i);
          break;
        }
      }
      open.push_back(i);
      order.push_back(i);
    }
  }
  // Children first: a parent's device time includes its children's kernels.
  for (auto i = order.rbegin(); i != order.rend(); ++i) {
    auto& parent = timed[*i];
    parent.self = parent.total;
    parent.device_total = parent.self_device;
    for (const auto child : children[*i]) {
      parent.self -= timed[child].total;
      parent.device_total += timed[child].device_total;
    }
  }
  return timed;
}

nlohmann::json operator_rows(const std::map<std::pair<std::string, std::string>, Row>& rows, double steps,
                             bool with_shapes, bool by_device, std::size_t limit) {
  std::vector<nlohmann::json> out;
  for (const auto& [key, row] : rows) {
    nlohmann::json entry{{"name", key.first},
                         {"calls", row.calls / steps},
                         {"self_cpu_s", std::max(0.0, row.self_cpu / 1e9 / steps)},
                         {"cpu_total_s", row.cpu_total / 1e9 / steps},
                         {"self_device_s", std::max(0.0, row.self_device / 1e9 / steps)},
                         {"device_total_s", row.device_total / 1e9 / steps}};
    if (with_shapes) entry["input_shapes"] = key.second;
    out.push_back(std::move(entry));
  }
  const char* first = by_device ? "self_device_s" : "self_cpu_s";
  std::stable_sort(out.begin(), out.end(), [&](const nlohmann::json& a, const nlohmann::json& b) {
    return a.at(first).get<double>() > b.at(first).get<double>();
  });  // ties stay in name (and shapes) order, the map's
  if (out.size() > limit) out.resize(limit);
  return out;
}

bool left_out_of_summary(const std::string& name) {
  // profiler_util.py's _filter_name.
  static const std::vector<std::string> names{"[memory]",
                                              "[OutOfMemory]",
                                              "profiler::_record_function_enter",
                                              "profiler::_record_function_enter_new",
                                              "profiler::_record_function_exit",
                                              "aten::is_leaf",
                                              "aten::output_nr",
                                              "aten::_version"};
  return std::find(names.begin(), names.end(), name) != names.end();
}

// key_averages()'s name for every step mark (profiler_util.py's _rewrite_name): one row for the steps.
std::string row_name(const std::string& name) { return name.starts_with(kStepMark) ? "ProfilerStep*" : name; }

}  // namespace

nlohmann::json summarize_profile(std::vector<ProfiledEvent> events, int64_t steps, bool by_shape, bool kernels_recorded,
                                 const SummaryLimits& limits) {
  std::erase_if(events, [](const ProfiledEvent& event) { return left_out_of_summary(event.name); });
  const auto timed = nest(events);
  std::map<std::pair<std::string, std::string>, Row> by_name, by_name_and_shape;
  std::map<std::string, Row> kernels;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& event = events[i];
    const auto& times = timed[i];
    if (event.on_device) {
      auto& kernel = kernels[event.name];
      kernel.calls += 1;
      kernel.self_device += times.total;
      continue;
    }
    for (auto* rows : {&by_name, &by_name_and_shape}) {
      if (rows == &by_name_and_shape && !by_shape) continue;
      auto& row = (*rows)[{row_name(event.name), rows == &by_name ? std::string() : event.input_shapes}];
      row.calls += 1;
      row.self_cpu += times.self;
      row.cpu_total += times.total;
      row.self_device += times.self_device;
      row.device_total += times.device_total;
    }
  }
  const auto per_step = static_cast<double>(std::max<int64_t>(1, steps));
  std::vector<nlohmann::json> kernel_rows;
  for (const auto& [name, row] : kernels) {
    kernel_rows.push_back(
        {{"name", name}, {"calls", row.calls / per_step}, {"device_s", row.self_device / 1e9 / per_step}});
  }
  std::stable_sort(kernel_rows.begin(), kernel_rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.at("device_s").get<double>() > b.at("device_s").get<double>();
  });
  const auto sum = [&](const auto& rows, auto member) {
    return std::accumulate(
               rows.begin(), rows.end(), 0.0,
               [&](double total, const auto& entry) { return total + std::max(0.0, entry.second.*member); }) /
           1e9 / per_step;
  };
  nlohmann::json totals{{"operators", by_name.size()},
                        {"self_cpu_s", sum(by_name, &Row::self_cpu)},
                        {"self_device_s", sum(by_name, &Row::self_device)},
                        {"kernels", kernels.size()},
                        {"kernel_s", sum(kernels, &Row::self_device)}};
  if (kernel_rows.size() > limits.kernels) kernel_rows.resize(limits.kernels);
  nlohmann::json summary{{"operators", operator_rows(by_name, per_step, false, kernels_recorded, limits.operators)},
                         {"kernels", kernel_rows},
                         {"totals", totals}};
  if (by_shape) {
    summary["operator_shapes"] =
        operator_rows(by_name_and_shape, per_step, true, kernels_recorded, limits.operator_shapes);
  }
  return summary;
}

}  // namespace ts::profiles
