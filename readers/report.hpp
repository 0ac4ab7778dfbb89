#pragma once
// `torchsweep report`: one self-contained HTML file (docs/report.md) made
// from the store: a summary, compiled/eager and runner/runner speedups with
// their intervals, throughput against batch size, memory, scaling, each
// configuration's history over the sweeps of its tag with change points,
// regressions against a baseline with their confirmation, the hosts'
// environments and, per configuration, the command that reproduces it.
// Vega draws the charts; it and the data are inlined, nothing is fetched.
#include <nlohmann/json.hpp>
#include <string>

#include "readers/query.hpp"

namespace ts::readers {

struct ReportOptions {
  // The sweeps reported on: `sweeps` (ids or names); else the newest sweep
  // carrying one of `tags`; else the store's newest sweep. where/since/until
  // narrow every section. The history is every sweep sharing a tag with them.
  ResultFilter filter;
  std::string baseline;  // sweep id, name or tag; empty: no regression section
  RegressionRule rule;
  std::string store_path;           // shown, and used in the commands the page gives
  std::size_t history_limit = 200;  // newest sweeps of a tag in the trends
  std::string page_folder;          // where the page goes (write_report sets it): links are relative to it
};

// Everything the page shows, as one JSON document (also the page's data).
nlohmann::json report_data(Database& database, const ReportOptions& options);
// The HTML page of `data`: Vega, the page's script and style and the data inlined.
std::string report_page(const nlohmann::json& data);
// report_page(report_data(...)) written to `path` atomically (a reader never sees half a page).
void write_report(Database& database, const ReportOptions& options, const std::string& path);

}  // namespace ts::readers
