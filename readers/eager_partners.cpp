#include "readers/eager_partners.hpp"

#include <regex>

#include "readers/labels.hpp"

namespace ts::readers {

namespace {

// An axis's SQL for the result aliased `alias` instead of r.
std::string for_alias(const std::string& sql, const std::string& alias) {
  static const std::regex r_column(R"(\br\.)");
  return std::regex_replace(sql, r_column, alias + ".");
}

}  // namespace

std::map<ResultKey, EagerPartner> eager_partners(Database& database, const ResultFilter& filter) {
  const auto condition = condition_of(database, filter);
  const auto& mode = axis_named("mode", "mode").sql;
  std::string same_configuration;
  for (const auto& name : configuration_axes_without("mode")) {
    const auto& sql = axis_named(name, name).sql;
    same_configuration += " AND " + for_alias(sql, "e") + " IS " + sql;
  }
  auto select = database.prepare(
      "SELECT r.job_id, r.attempt, e.job_id, e.attempt, e.median_epoch_s / r.median_epoch_s "
      "FROM results r JOIN jobs jr ON jr.job_id = r.job_id "
      "JOIN results e ON e.sweep_id = r.sweep_id AND e.status = 'ok' AND " +
      for_alias(mode, "e") + " = 'eager'" + same_configuration +
      " JOIN jobs je ON je.job_id = e.job_id AND je.repeat = jr.repeat AND je.purpose = jr.purpose "
      "WHERE " +
      mode + " = 'compiled' AND " + condition.sql + " ORDER BY r.job_id, r.attempt, e.attempt DESC");
  bind_condition(select, condition);
  std::map<ResultKey, EagerPartner> partners;
  while (select.step()) {
    EagerPartner partner{{select.text(2), select.integer(3)}, std::nullopt};
    if (!select.is_null(4)) partner.speedup = select.real(4);
    partners.try_emplace({select.text(0), select.integer(1)}, std::move(partner));
  }
  return partners;
}

}  // namespace ts::readers
