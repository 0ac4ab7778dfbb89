// torchsweep explain A B (docs/explain.md): why one configuration's step
// takes more time than another's. A side whose stored runs have no profile
// is profiled first: its newest run's job again, as submitted (same weights,
// batch and knobs), with the profile field, by a local agent into the same
// store, or with --coordinator by that coordinator's agents into its store;
// then readers/explanation.hpp pairs the two profiles.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/filter_options.hpp"
#include "cli/local_sweep.hpp"
#include "readers/explanation.hpp"
#include "readers/explanation_text.hpp"
#include "shared/errors.hpp"
#include "shared/wire/protocol.hpp"
#include "store/artifacts.hpp"
#include "store/migrations.hpp"

namespace ts::cli {
namespace {

// The sweep that profiles one side: its newest run's job once, with a profile.
nlohmann::json profiling_sweep(const readers::ExplainSide& side, const std::optional<int64_t>& steps) {
  auto job = side.job;
  if (!job.contains("profile") || job.at("profile").is_null()) job["profile"] = nlohmann::json::object();
  if (steps) job["profile"]["steps"] = *steps;
  const auto model = job.at("model");
  job.erase("model");  // a sweep has an axis: the model's, of one value
  return {{"name", "explain-profile"},
          {"description", "torchsweep explain: a profile of side " + side.name + " (" + side.spec + ")"},
          {"tags", {"explain"}},
          {"axes", {{"model", {model}}}},
          {"fixed", job},
          {"repeats", 1}};
}

// The error of the profiling sweep's job when it failed.
std::optional<std::string> failed_job(const std::string& db, const std::string& sweep_id) {
  auto database = store::open_read_only(db);
  auto select = database.prepare("SELECT COALESCE(last_error, state) FROM jobs WHERE sweep_id = ? AND state <> 'done'");
  select.bind_all(sweep_id);
  if (!select.step()) return std::nullopt;
  return select.text(0);
}

// Why a profiling run took no profile: its job's error, or its result's reason or warnings.
std::string no_profile_reason(const std::string& db, const readers::ExplainSide& side) {
  auto database = store::open_read_only(db);
  auto select = database.prepare(
      "SELECT j.state, j.last_error, json_extract(d.document, '$.profile.reason'), "
      "json_extract(d.document, '$.warnings') FROM jobs j JOIN sweeps s ON s.sweep_id = j.sweep_id "
      "LEFT JOIN result_documents d ON d.job_id = j.job_id WHERE s.name = 'explain-profile' "
      "ORDER BY s.created_at DESC, d.attempt DESC LIMIT 1");
  if (!select.step()) return "no profiling job was stored";
  if (select.text(0) != "done") return "the job " + select.text(0) + ": " + select.text(1);
  if (!select.is_null(2)) return select.text(2);
  std::string reasons;
  for (const auto& warning : nlohmann::json::parse(select.is_null(3) ? "[]" : select.text(3))) {
    if (warning.get<std::string>().find("profile") != std::string::npos) {
      reasons += (reasons.empty() ? "" : "; ") + warning.get<std::string>();
    }
  }
  return reasons.empty() ? "the " + side.configuration.value("runner", std::string("?")) + " runner took none"
                         : reasons;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "explain",
      "why configuration B's step differs from A's: operators and kernels by their share of the measured "
      "difference, reconciled against it, with the compiler's differences and memory (profiling a side first "
      "when its runs have no profile)");
  struct Settings : FilterSettings {
    readers::ExplainOptions explain;
    std::string a, b;
    LocalSweepSettings local;
    ClientSettings client;
    int64_t timeout_s = 3600;
    std::optional<int64_t> profile_steps;
    bool no_profile = false;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("A", settings->a, "the reference: AXIS=VALUE[,AXIS=VALUE...] (sweep=, tag= too)")->required();
  command->add_option("B", settings->b, "the other side, as A")->required();
  add_filter_options(command, *settings, "table");
  command->get_option("--format")->description("table | json | markdown (a block for an issue tracker)");
  command->add_option("--top", settings->explain.top, "operator and kernel rows")->capture_default_str();
  command->add_flag("--no-profile", settings->no_profile,
                    "never run anything: a side without a profiled run is an error");
  command
      ->add_option("--profile-steps", settings->profile_steps,
                   "steps of a profiling run (default: the job field's, docs/explain.md)")
      ->check(CLI::Range(1, 100));
  add_local_agent_options(command, settings->local);
  add_client_options(command, settings->client);
  auto* coordinator = command->get_option("--coordinator");
  coordinator->description(
      "HOST:PORT: profile a side on this coordinator's agents (its store must be --db) instead of a local agent");
  command->add_option("--timeout-s", settings->timeout_s, "with --coordinator: how long a profiling run may take")
      ->capture_default_str();
  return [settings, coordinator] {
    if (settings->format != "table" && settings->format != "json" && settings->format != "markdown") {
      throw InvalidInput("--format", "expected table, json or markdown, got '" + settings->format + "'");
    }
    auto options = settings->explain;
    options.filter = settings->filter();
    options.sides = {readers::parse_side("A", settings->a), readers::parse_side("B", settings->b)};
    if (!settings->no_profile && coordinator->count() == 0) migrate_for_local_agent(settings->db);
    const auto unprofiled = [&] {
      auto database = store::open_read_only(settings->db);
      std::vector<readers::ExplainSide> missing;
      for (const auto& side : readers::explain_sides(database, options)) {
        // Sides of one configuration keep to their own runs' profiles: explain says so.
        if (!side.profiled && !side.same_configuration) missing.push_back(side);
      }
      return missing;
    }();
    for (const auto& side : settings->no_profile ? std::vector<readers::ExplainSide>{} : unprofiled) {
      std::cerr << "side " << side.name << " (" << side.spec << ") has no profiled run: profiling it\n";
      const auto spec = profiling_sweep(side, settings->profile_steps);
      if (coordinator->count() > 0) {
        const auto submitted = request(
            settings->client,
            wire::make_message("submit", {{"sweep", spec}, {"origin", "explain"}, {"submitter", submitter_name()}}));
        const auto sweep_id = submitted.at("sweep_id").get<std::string>();
        wait_for_sweep(settings->client, sweep_id, std::chrono::seconds(settings->timeout_s));
        if (const auto failed = failed_job(settings->db, sweep_id)) {
          std::cerr << "the profiling run of side " << side.name << " failed: " << *failed << "; nothing to explain\n";
          return exit_code::run_failed;
        }
      } else {
        auto local = settings->local;
        local.db = settings->db;
        local.sweep = "explain side " + side.name;
        const int code = run_local_sweep(local, spec, [](store::Store&, const std::string&) {});
        if (code != exit_code::ok) {
          std::cerr << "the profiling run of side " << side.name << " failed (above); nothing to explain\n";
          return code;
        }
      }
      auto database = store::open_read_only(settings->db);
      if (!readers::explain_sides(database, options)[side.name == "A" ? 0 : 1].profiled) {
        throw InvalidInput(side.name,
                           side.spec + ": its profiling run took no profile: " + no_profile_reason(settings->db, side));
      }
    }
    if (const auto files = store::ArtifactFiles::beside(settings->db)) options.artifacts = files->directory().string();
    auto database = store::open_read_only(settings->db);
    const auto explanation = readers::explain(database, options);
    if (settings->format == "json") {
      std::cout << explanation.dump(2) << "\n";
    } else if (settings->format == "markdown") {
      std::cout << readers::explanation_markdown(explanation);
    } else {
      std::cout << readers::explanation_text(explanation);
    }
    return exit_code::ok;
  };
}

}  // namespace ts::cli
