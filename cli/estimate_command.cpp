// torchsweep estimate: how long a sweep's jobs will take on a node whose
// peak was measured, before anything runs (shared/sweep/time_estimate.hpp):
// what a time-boxed run such as a GPU lease schedules by (docs/sweeps.md).
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/key_value.hpp"
#include "cli/table_renderer.hpp"
#include "cli/terminal_width.hpp"
#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/json_io.hpp"
#include "shared/schema.hpp"
#include "shared/sweep/sweep.hpp"
#include "shared/sweep/time_estimate.hpp"

namespace ts::cli {

Command add_estimate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "estimate", "estimate each job's seconds from its FLOPs against a measured peak, at a stated MFU");
  struct Settings {
    std::string sweep, peak, format = "table";
    std::vector<std::string> compile_s;
    sweep::EstimateAssumptions assumptions{
        .mfu = 0.3, .start_s = 10, .compile_s = {}, .compile_s_otherwise = 60, .decode_step_s = 0.005};
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("sweep", settings->sweep, "sweep file (YAML or JSON)")->required();
  command
      ->add_option("--peak-flops", settings->peak,
                   "the node's measured peak (torchsweep-worker --probe-peak's document, or an agent's "
                   "peak_flops.json)")
      ->required();
  command->add_option("--mfu", settings->assumptions.mfu, "the fraction of the peak a step reaches")
      ->check(CLI::Range(1e-6, 1.0))
      ->capture_default_str();
  command->add_option("--start-s", settings->assumptions.start_s, "every job's start: runner, import, device, data")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--compile-s", settings->compile_s,
                      "RUNNER=SECONDS: a compiled job's compile time and accuracy gate in that runner (repeatable)");
  command
      ->add_option("--compile-s-otherwise", settings->assumptions.compile_s_otherwise,
                   "a compiled job's compile allowance in a runner --compile-s does not name")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--decode-step-s", settings->assumptions.decode_step_s, "the least one decode step takes")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--format", settings->format, "table, csv or json")->capture_default_str();
  return [settings] {
    const auto format = parse_format(settings->format, "--format");
    auto assumptions = settings->assumptions;
    for (const auto& text : settings->compile_s) {
      const auto [runner, seconds] = split_key_value(text, "--compile-s");
      try {
        assumptions.compile_s[runner] = std::stod(seconds);
      } catch (const std::exception&) {
        throw InvalidInput("--compile-s", "RUNNER=SECONDS with a number of seconds", text);
      }
    }
    auto peak = json_io::read(settings->peak);
    if (peak.contains("peak")) peak = peak.at("peak");  // an agent's work directory keeps it under "peak"
    static const schema::Validator validator("peak_flops.schema.json");
    if (const auto problems = validator.problems(peak); !problems.empty()) {
      throw InvalidInput("--peak-flops: " + problems.front().field, problems.front().expected, settings->peak);
    }
    const auto planned = sweep::expand(sweep::read_document(settings->sweep), settings->sweep);
    Table table{{"ordinal", "runner", "model", "task", "precision", "mode", "batch_size", "steps", "flops_per_step",
                 "peak_dtype", "peak_flops_per_s", "compute_s", "allowance_s", "estimate_s", "ends_at_s"},
                {}};
    double total = 0;
    for (const auto& job : planned.jobs) {
      const auto& document = job.document;
      const auto estimate = sweep::estimate_job(document, peak, assumptions);
      total += estimate.seconds;
      table.rows.push_back({job.ordinal, job_fields::get<std::string>(document, "runner"),
                            document.at("model").get<std::string>(), job_fields::get<std::string>(document, "task"),
                            job_fields::get<std::string>(document, "precision"),
                            job_fields::get<std::string>(document, "mode"), document.at("batch_size"), estimate.steps,
                            estimate.flops_per_step, estimate.peak_dtype, estimate.peak_flops_per_s, estimate.compute_s,
                            estimate.allowance_s, estimate.seconds, total});
    }
    std::cout << render(table, format, terminal_width());
    if (format == Format::table) {
      std::printf("%zu jobs, %.0f s in all, at MFU %.2f, %.0f s a start, compiles as stated\n", planned.jobs.size(),
                  total, assumptions.mfu, assumptions.start_s);
    }
    return exit_code::ok;
  };
}

}  // namespace ts::cli
