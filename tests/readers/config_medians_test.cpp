// The config_medians view (docs/store.md) and `torchsweep query`'s default
// grouping name the same configurations: an analyst's SQL and the CLI never
// pool differently.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>

#include "readers/query.hpp"
#include "readers/vocabulary.hpp"
#include "simulation/synthetic_result.hpp"
#include "store/store.hpp"

namespace ts::readers {
namespace {

using simulation::judged;
using simulation::make_result;
using simulation::SyntheticResult;

using Key = std::vector<std::optional<std::string>>;  // a configuration's axis values as text, null where none

// Every configuration of the view with its result count and median epoch time.
std::map<Key, std::pair<int64_t, double>> view_rows(store::Database& database) {
  std::string columns;
  for (const auto& axis : configuration_axes()) columns += axis + ", ";
  auto view = database.prepare("SELECT " + columns + "results, median_epoch_s FROM config_medians");
  const auto axes = static_cast<int>(configuration_axes().size());
  std::map<Key, std::pair<int64_t, double>> rows;
  while (view.step()) {
    Key key;
    for (int column = 0; column < axes; ++column) {
      key.push_back(view.is_null(column) ? std::nullopt : std::optional(view.text(column)));
    }
    rows[key] = {view.integer(axes), view.real(axes + 1)};
  }
  return rows;
}

// Two gpt sweeps at different seq_len, a generation at two prompt lengths and
// an image model on real and on synthetic data, channels_last and contiguous:
// each a configuration of its own in query's default grouping, and so in the
// view.
TEST(ConfigMedians, TheViewNamesQuerysConfigurationsNeverPoolingWhatQueryKeepsApart) {
  store::Store store(":memory:");
  int id = 0;
  const auto add = [&](SyntheticResult shape, const nlohmann::json& job_fields, double seconds) {
    shape.job_id = "j" + std::to_string(++id);
    shape.epoch_seconds = {seconds};
    auto result = make_result(shape);
    result["job"].update(job_fields);
    if (job_fields.contains("memory_format")) {
      result["execution"]["data_layout"] = job_fields.at("memory_format") == "channels_last" ? "NHWC" : "NCHW";
    }
    store.ingest_result(judged(result), "a");
  };
  for (double seconds : {1.0, 1.2}) add({.model = "gpt"}, {{"seq_len", 64}}, seconds);
  for (double seconds : {2.0, 2.4}) add({.model = "gpt"}, {{"seq_len", 128}}, seconds);
  add({.model = "gpt"}, {{"task", "generate"}, {"seq_len", 64}, {"prompt_len", 8}, {"new_tokens", 4}}, 0.5);
  add({.model = "gpt"}, {{"task", "generate"}, {"seq_len", 64}, {"prompt_len", 16}, {"new_tokens", 4}}, 0.7);
  add({}, {{"data", "synthetic"}, {"memory_format", "contiguous"}}, 3.0);
  add({}, {{"data", {{"folder", "imagenet-mini"}, {"format", "imagefolder"}}}, {"memory_format", "contiguous"}}, 5.0);
  add({}, {{"data", "synthetic"}, {"memory_format", "channels_last"}}, 2.5);

  const auto table = query(store.database(), {});
  const auto found = view_rows(store.database());
  ASSERT_EQ(found.size(), table.rows.size()) << "the view pools configurations query keeps apart";
  EXPECT_EQ(found.size(), 7u);
  const auto column = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto at = std::find(table.columns.begin(), table.columns.end(), name);
    if (at == table.columns.end()) return std::nullopt;
    return static_cast<std::size_t>(at - table.columns.begin());
  };
  for (const auto& row : table.rows) {
    Key key;
    std::string named;
    for (const auto& axis : configuration_axes()) {
      const auto at = column(axis);  // a sparse axis no result has is no column
      if (!at || row[*at].is_null()) {
        key.emplace_back(std::nullopt);
      } else {
        key.emplace_back(row[*at].is_string() ? row[*at].get<std::string>() : row[*at].dump());
      }
      named += axis + "=" + key.back().value_or("null") + " ";
    }
    const auto in_view = found.find(key);
    ASSERT_NE(in_view, found.end()) << "query's configuration " << named << "is not in the view";
    EXPECT_EQ(in_view->second.first, row[column("runs").value()].get<int64_t>()) << named;
    EXPECT_DOUBLE_EQ(in_view->second.second, row[column("epoch_time_s").value()].get<double>()) << named;
  }
}

}  // namespace
}  // namespace ts::readers
