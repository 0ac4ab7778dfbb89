#pragma once
// The options every command that reads the store shares: which store, and
// which results (docs/query.md, "Filters").
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "readers/query.hpp"

namespace ts::cli {

struct FilterSettings {
  std::string db = "torchsweep.db";
  std::vector<std::string> sweeps, tags, where;
  std::string since, until, purpose = readers::ResultFilter{}.purpose, format = "table";
  bool include_failed = false;

  readers::ResultFilter filter() const;
};

// --db, --sweep, --tag, --since, --until, --where, --include-failed and
// --purpose; --format (with `default_format`) unless it is empty.
void add_filter_options(CLI::App* command, FilterSettings& settings, const std::string& default_format);

// --alpha and --threshold of the regression rule (docs/query.md).
void add_regression_options(CLI::App* command, readers::RegressionRule& rule);

}  // namespace ts::cli
