#include "cli/filter_options.hpp"

#include "cli/key_value.hpp"

namespace ts::cli {

readers::ResultFilter FilterSettings::filter() const {
  readers::ResultFilter filter{sweeps, tags, since, until, {}, include_failed, purpose};
  for (const auto& condition : where) filter.where.push_back(split_key_value(condition, "--where"));
  return filter;
}

void add_filter_options(CLI::App* command, FilterSettings& settings, const std::string& default_format) {
  command->add_option("--db", settings.db, "the SQLite store")->capture_default_str();
  command->add_option("--sweep", settings.sweeps, "only this sweep: id, or name for its newest run (repeatable)");
  command->add_option("--tag", settings.tags, "only sweeps with this tag (repeatable)");
  command->add_option("--since", settings.since,
                      "only results received at or after this instant: 2026-11-30, 2026-11-30T18:00Z, "
                      "2026-11-30T18:00:30+01:00 (UTC unless a zone is given)");
  command->add_option("--until", settings.until, "only results received before this instant (forms as --since)");
  command->add_option("--where", settings.where, "AXIS=VALUE: only results where the axis has the value (repeatable)");
  command->add_flag("--include-failed", settings.include_failed, "also results whose status is not ok");
  command
      ->add_option("--purpose", settings.purpose,
                   "measurement (the sweep's own runs), confirmation (reruns of torchsweep confirm) or any")
      ->capture_default_str();
  if (default_format.empty()) return;
  settings.format = default_format;
  command->add_option("--format", settings.format, "table | csv | json")->capture_default_str();
}

void add_regression_options(CLI::App* command, readers::RegressionRule& rule) {
  command->add_option("--alpha", rule.alpha, "significance level of the regression test")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  command
      ->add_option("--threshold", rule.threshold, "smallest relative change of the median that counts as a regression")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--calibration", rule.calibration_tag,
                   "tag of the calibration sweeps whose noise raises a configuration's threshold where it needs more "
                   "(docs/noise.md); '' for --threshold alone")
      ->capture_default_str();
}

}  // namespace ts::cli
