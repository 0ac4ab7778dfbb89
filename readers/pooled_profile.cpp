#include "readers/pooled_profile.hpp"

#include <map>
#include <string>

#include "shared/statistics.hpp"

namespace ts::readers {
namespace {

using nlohmann::json;

// The rows of `table` (operators or kernels) pooled: the median of each numeric member over the runs that know
// the name.
json pooled_rows(const std::vector<json>& profiles, const char* table, const char* count) {
  std::map<std::string, const json*> named;  // every name any run has, with a row of it
  for (const auto& profile : profiles) {
    for (const auto& row : profile.at(table)) named.try_emplace(row.at("name").get<std::string>(), &row);
  }
  std::map<std::string, std::map<std::string, std::vector<double>>> values;  // name -> member -> per run
  for (const auto& profile : profiles) {
    const auto& rows = profile.at(table);
    const bool complete = rows.size() >= profile.at("totals").at(count).get<std::size_t>();
    std::map<std::string, const json*> own;
    for (const auto& row : rows) own[row.at("name").get<std::string>()] = &row;
    for (const auto& [name, example] : named) {
      const auto found = own.find(name);
      if (found == own.end() && !complete) continue;  // beyond this run's rows: unknown, not 0
      for (const auto& [member, value] : example->items()) {
        if (!value.is_number()) continue;
        values[name][member].push_back(found == own.end() ? 0.0 : found->second->at(member).get<double>());
      }
    }
  }
  json pooled = json::array();
  for (const auto& [name, members] : values) {
    json row{{"name", name}};
    for (const auto& [member, samples] : members) row[member] = stats::median(samples);
    pooled.push_back(row);
  }
  return pooled;
}

}  // namespace

json pooled_profile(const std::vector<json>& profiles) {
  const auto& newest = profiles.front();
  json pool{{"profiler", newest.at("profiler")}, {"activities", newest.at("activities")}, {"runs", profiles.size()}};
  std::vector<double> steps;
  std::map<std::string, std::vector<double>> totals;
  bool complete = true;
  for (const auto& profile : profiles) {
    // The mean, as the operators' times are (the profiler's totals over the steps): a step the machine
    // interrupted counts in both alike.
    steps.push_back(stats::mean(profile.at("step_seconds").get<std::vector<double>>()));
    for (const auto& [name, value] : profile.at("totals").items()) totals[name].push_back(value.get<double>());
    complete = complete && profile.at("operators").size() >= profile.at("totals").at("operators").get<std::size_t>() &&
               profile.at("kernels").size() >= profile.at("totals").at("kernels").get<std::size_t>();
  }
  pool["step_s"] = stats::median(steps);
  for (const auto& [name, values] : totals) pool["totals"][name] = stats::median(values);
  pool["complete"] = complete;
  pool["operators"] = pooled_rows(profiles, "operators", "operators");
  pool["kernels"] =
      profiles.front().at("kernels").empty() ? json::array() : pooled_rows(profiles, "kernels", "kernels");
  return pool;
}

}  // namespace ts::readers
