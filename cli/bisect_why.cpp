#include "cli/bisect_why.hpp"

#include "readers/explanation.hpp"
#include "shared/digest.hpp"
#include "store/artifacts.hpp"
#include "store/migrations.hpp"

namespace ts::cli {

std::string WhySweep::tag() const {
  return bisection_tag + "-why-" + sha256_hex(last_good + "\n" + first_bad).substr(0, 8);
}

nlohmann::json WhySweep::document() const {
  auto job = configuration;
  job["profile"] = nlohmann::json::object();
  if (profile_steps) job["profile"]["steps"] = *profile_steps;
  return {{"name", bisection_tag + "-why"},
          {"description",
           "torchsweep bisect --explain: " + field + "=" + first_bad + " against " + last_good + ", profiled in pairs"},
          {"tags", {"bisect-why", tag()}},
          {"axes", {{field, {last_good, first_bad}}}},
          {"fixed", job},
          {"pairing", {{"by", field}}},
          {"repeats", runs}};
}

std::optional<std::string> why_sweep_in(const std::string& db, const WhySweep& why) {
  auto database = store::open_read_only(db);
  auto select = database.prepare(
      "SELECT s.sweep_id FROM sweeps s JOIN sweep_tags t ON t.sweep_id = s.sweep_id "
      "WHERE t.tag = ? AND s.state <> 'cancelled' ORDER BY s.created_at DESC, s.rowid DESC LIMIT 1");
  select.bind_all(why.tag());
  if (!select.step()) return std::nullopt;
  return select.text(0);
}

nlohmann::json explain_pair(const std::string& db, const WhySweep& why, const std::string& sweep_id) {
  readers::ExplainOptions options;
  const auto side = [&](const char* name, const std::string& value) {
    return readers::parse_side(name, "sweep=" + sweep_id + "," + why.field + "=" + value);
  };
  options.sides = {side("A", why.last_good), side("B", why.first_bad)};
  if (const auto files = store::ArtifactFiles::beside(db)) options.artifacts = files->directory().string();
  auto database = store::open_read_only(db);
  return readers::explain(database, options);
}

}  // namespace ts::cli
