// torchsweep nightly SWEEP_FILE: the nightly path (docs/deploy.md), what
// the systemd timer runs. Submits the sweep tagged with the nightly tag and
// the date, waits for it, judges it against the previous sweep of the tag,
// reruns each flagged regression once (docs/report.md), with --bisect finds
// which PyTorch upgrade made each one (docs/bisect.md), writes the report
// and leaves the verdict in the exit status for alerting:
//   0 nothing regressed, 6 a regression was confirmed (--no-confirm: flagged),
//   3 a job failed (and nothing was confirmed), 4 the coordinator is unreachable.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/filter_options.hpp"
#include "cli/nightly_bisection.hpp"
#include "cli/table_renderer.hpp"
#include "readers/explanation_text.hpp"
#include "readers/labels.hpp"
#include "readers/regression_records.hpp"
#include "readers/report.hpp"
#include "readers/why_section.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/timestamp.hpp"
#include "shared/wire/protocol.hpp"
#include "store/artifacts.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

// The sweep document of `path` with the nightly tag and the dated one added.
nlohmann::json tagged(const std::string& path, const std::string& tag, const std::string& date) {
  auto spec = sweep::read_document(path);
  auto tags = sweep::parse(spec, path).tags;
  for (const auto& added : {tag, tag + "-" + date}) {
    if (std::find(tags.begin(), tags.end(), added) == tags.end()) tags.push_back(added);
  }
  spec["tags"] = tags;
  return spec;
}

// Whether another sweep carries `tag`: on the first night there is no baseline.
bool has_baseline(const std::string& db, const std::string& tag, const std::string& sweep_id) {
  auto database = store::open_read_only(db);
  auto select = database.prepare("SELECT 1 FROM sweep_tags WHERE tag = ? AND sweep_id <> ? LIMIT 1");
  select.bind_all(tag, sweep_id);
  return select.step();
}

// `torchsweep explain` of each regression the night confirmed (or flagged, unconfirmed), against the baseline,
// printed; one without profiles on both nights says so.
void explain_regressions(const std::string& db, const readers::Table& table, const readers::ResultFilter& current,
                         const std::string& tag) {
  auto database = store::open_read_only(db);
  const auto baseline_id = readers::resolve_baseline(database, tag, current);
  for (const auto& row : readers::row_objects(table)) {
    if (!readers::explained_regression(row)) continue;
    auto options = readers::regression_explanation(row, current, baseline_id);
    if (const auto files = store::ArtifactFiles::beside(db)) options.artifacts = files->directory().string();
    std::printf("\nWhy %s regressed (torchsweep explain, docs/explain.md):\n",
                readers::label_of(row, readers::configuration_axes()).c_str());
    try {
      std::printf("%s", readers::explanation_text(readers::explain(database, options)).c_str());
    } catch (const InvalidInput& error) {
      std::printf("  not explained: %s\n", error.what());
    }
  }
}

// Each regression of the night recorded in the store (through the coordinator, its one writer) and printed with its
// id: what `torchsweep bisect ID` and `query --regressions` take (docs/bisect.md).
void record_regressions(const ClientSettings& client, const std::string& db, const readers::Table& table,
                        const readers::RegressionOptions& options) {
  const auto records = [&] {
    auto database = store::open_read_only(db);
    return readers::regression_records(database, table, options.filter,
                                       readers::resolve_baseline(database, options.baseline, options.filter),
                                       options.metric);
  }();
  if (records.empty()) return;
  try {
    request(client, wire::make_message("record_regressions", {{"regressions", records}}));
  } catch (const std::exception& error) {
    log::warn("the night's regressions were not recorded: {}", error.what());
    return;
  }
  std::printf("\nRegressions recorded (torchsweep query --regressions; torchsweep bisect ID, docs/bisect.md):\n");
  for (const auto& record : records) {
    std::printf("  %s  %-11s  %s\n", record.at("regression_id").get<std::string>().c_str(),
                record.at("classification").get<std::string>().c_str(),
                readers::label_of(record.at("configuration"), readers::configuration_axes()).c_str());
  }
}

}  // namespace

Command add_nightly_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "nightly",
      "submit a sweep tagged with the date, wait, judge it against the previous night, confirm, write the report");
  struct Settings {
    ClientSettings client;
    std::string sweep, db = "torchsweep.db", tag = "nightly", report_dir = ".";
    int64_t runs = 0, timeout_s = 12 * 3600;
    readers::RegressionRule rule;
    bool no_confirm = false, explain = false, bisect = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("sweep", settings->sweep, "sweep file (YAML or JSON)")->required();
  command->add_option("--db", settings->db, "the coordinator's SQLite store, read here")->capture_default_str();
  command->add_option("--tag", settings->tag, "the tag of the nightly history (the baseline is its previous sweep)")
      ->capture_default_str();
  command->add_option("--report-dir", settings->report_dir, "where SWEEP_ID.html and latest.html go")
      ->capture_default_str();
  command->add_flag("--no-confirm", settings->no_confirm, "no reruns: a flagged regression decides the exit status");
  command->add_flag("--explain", settings->explain,
                    "torchsweep explain each regression it confirms (with --no-confirm: flags) against the baseline, "
                    "from both nights' profiles (the sweep needs the job field profile)");
  command->add_flag(
      "--bisect", settings->bisect,
      "torchsweep bisect each regression it confirms (with --no-confirm: flags) whose two nights ran "
      "different PyTorch versions, over the environments the agents offer between them "
      "(docs/bisect.md); --timeout-s bounds each step; with --explain, each first bad is explained against "
      "its last good, profiled in pairs");
  add_confirmation_options(command, settings->runs, settings->timeout_s);
  add_regression_options(command, settings->rule);
  add_client_options(command, settings->client);
  return [settings] {
    const auto date = utc_timestamp().substr(0, 10);
    const auto spec = tagged(settings->sweep, settings->tag, date);
    sweep::expand(spec, settings->sweep);  // a bad file fails here, before anything is sent
    const auto submitted = request(
        settings->client,
        wire::make_message("submit", {{"sweep", spec}, {"origin", settings->sweep}, {"submitter", submitter_name()}}));
    const auto sweep_id = submitted.at("sweep_id").get<std::string>();
    log::info("nightly {}: sweep {} submitted, {} jobs", date, sweep_id, submitted.at("jobs").get<int64_t>());
    const std::chrono::seconds timeout(settings->timeout_s);
    wait_for_sweep(settings->client, sweep_id, timeout);
    const auto status =
        request(settings->client, wire::make_message("status", {{"sweep", sweep_id}, {"agents", false}}));
    const auto failed = status.at("sweeps").at(0).at("jobs").value("failed", int64_t{0});

    readers::ReportOptions report;
    report.filter.sweeps = {sweep_id};
    report.store_path = settings->db;
    report.rule = settings->rule;
    int code = failed > 0 ? exit_code::run_failed : exit_code::ok;
    if (has_baseline(settings->db, settings->tag, sweep_id)) {
      report.baseline = settings->tag;
      readers::RegressionOptions options{report.filter, settings->tag, settings->rule};
      auto table = settings->no_confirm ? [&] {
        auto database = store::open_read_only(settings->db);
        return readers::regressions(database, options);
      }()
                                        : confirm_regressions(settings->client, settings->db, options,
                                                              settings->runs, timeout);
      print_classification(table, Format::table);
      record_regressions(settings->client, settings->db, table, options);
      if (settings->explain) explain_regressions(settings->db, table, report.filter, settings->tag);
      if (settings->bisect) {
        bisect_regressions({settings->client, settings->db, settings->tag, settings->rule, timeout, settings->explain},
                           table, report.filter);
      }
      auto counted = count_classifications(table);
      if (counted["confirmed"] > 0 || (settings->no_confirm && counted["flagged"] > 0)) {
        code = exit_code::regression_confirmed;
      }
    } else {
      std::printf("first sweep tagged %s: no baseline to compare with yet\n", settings->tag.c_str());
    }
    std::filesystem::create_directories(settings->report_dir);
    const auto page = (std::filesystem::path(settings->report_dir) / (sweep_id + ".html")).string();
    auto database = store::open_read_only(settings->db);
    readers::write_report(database, report, page);
    const auto latest = std::filesystem::path(settings->report_dir) / "latest.html";
    // Copied then renamed: whoever serves latest.html never sends half a page.
    const auto partial = latest.string() + ".partial";
    std::filesystem::copy_file(page, partial, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(partial, latest);
    std::printf("sweep %s: %lld failed jobs; report %s (and %s)\n", sweep_id.c_str(), static_cast<long long>(failed),
                page.c_str(), latest.string().c_str());
    return code;
  };
}

}  // namespace ts::cli
