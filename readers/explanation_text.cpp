#include "readers/explanation_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "readers/sql_parts.hpp"

namespace ts::readers {
namespace {

using nlohmann::json;

std::string ms(const json& seconds) {
  return seconds.is_null() ? "-" : fmt::format("{:.3f}", seconds.get<double>() * 1e3);
}
std::string signed_ms(double seconds) { return fmt::format("{:+.3f} ms", seconds * 1e3); }
std::string mib(const json& bytes) {
  return bytes.is_null() ? "-" : fmt::format("{:.1f} MiB", bytes.get<double>() / (1024.0 * 1024.0));
}
std::string share(const json& value) {
  return value.is_null() ? "-" : fmt::format("{:+.0f}%", value.get<double>() * 100);
}
std::string calls(const json& value) { return value.is_null() ? "-" : fmt::format("{:g}", value.get<double>()); }

// "model=mlp mode=eager ...": the side's configuration, the axes with a value.
std::string configuration_text(const json& configuration) {
  std::string text;
  for (const auto& [axis, value] : configuration.items()) {
    if (!value.is_null()) text += (text.empty() ? "" : " ") + axis + "=" + json_text(value);
  }
  return text;
}

std::string time_name(const json& explanation) {
  return explanation.at("time") == "self_device_s" ? "self device time" : "self CPU time";
}

// The table of paired rows, as a grid of cells (header first).
std::vector<std::vector<std::string>> grid(const json& rows, const std::string& first) {
  std::vector<std::vector<std::string>> cells{
      {first, "change", "calls A", "calls B", "A ms", "B ms", "difference ms", "share"}};
  for (const auto& row : rows) {
    cells.push_back({row.at("name").get<std::string>(), row.at("change").get<std::string>(), calls(row.at("calls")[0]),
                     calls(row.at("calls")[1]), ms(row.at("seconds")[0]), ms(row.at("seconds")[1]),
                     fmt::format("{:+.3f}", row.at("difference_s").get<double>() * 1e3), share(row.at("share"))});
  }
  return cells;
}

std::string aligned(const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      // Names and changes to the left, figures to the right.
      line += c < 2 ? fmt::format("{:<{}}  ", row[c], widths[c]) : fmt::format("{:>{}}  ", row[c], widths[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += "  " + line + "\n";
  }
  return text;
}

std::string markdown_table(const std::vector<std::vector<std::string>>& cells) {
  std::string text;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::string line = "|";
    for (const auto& cell : cells[r]) {
      std::string escaped;
      for (const char c : cell) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
      line += " " + escaped + " |";
    }
    text += line + "\n";
    if (r == 0) {
      text += "|";
      for (std::size_t c = 0; c < cells[r].size(); ++c) text += c < 2 ? " --- |" : " ---: |";
      text += "\n";
    }
  }
  return text;
}

std::string timed_line(const json& explanation) {
  const auto& timed = explanation.at("timed");
  const double a = timed.at("step_s")[0], b = timed.at("step_s")[1];
  const double low = timed.at("interval")[0], high = timed.at("interval")[1];
  const std::string verdict = low > 0 || high < 0 ? ""
                                                  : "\nThe interval holds 0: B is not measurably slower or faster "
                                                    "than A; the rows below say where the time moved, with no share.";
  return fmt::format(
             "Timed step (median): A {} ms, B {} ms: B {} ({:+.1f}%), {:.0f}% interval {} .. {} ({}: {} and {} "
             "samples{})",
             ms(a), ms(b), signed_ms(b - a), (b / a - 1) * 100, timed.at("level").get<double>() * 100,
             signed_ms(timed.at("interval")[0]), signed_ms(timed.at("interval")[1]),
             timed.at("interval_from") == "runs" ? "each run's median step" : "every timed step",
             timed.at("samples")[0].get<int>(), timed.at("samples")[1].get<int>(),
             timed.at("interval_from") == "runs" ? "" : "; fewer than 5 runs a side, so the spread within runs") +
         verdict;
}

std::vector<std::string> reconciliation_lines(const json& explanation) {
  const auto& r = explanation.at("reconciliation");
  const auto& profiled = explanation.at("profiled");
  std::vector<std::string> lines{
      fmt::format("measured {} = operators {} + outside any operator {} - the profiler's own cost {} + the "
                  "profiled runs' distance from every run {}",
                  signed_ms(r.at("measured_s")), signed_ms(r.at("operators_s")), signed_ms(r.at("outside_operators_s")),
                  signed_ms(r.at("profiler_cost_s")), signed_ms(r.at("profiled_runs_s"))),
      fmt::format("(profiled runs: timed step A {} ms, B {} ms; profiled step A {} ms, B {} ms; their operators' {} "
                  "A {} ms, B {} ms)",
                  ms(profiled.at("timed_step_s")[0]), ms(profiled.at("timed_step_s")[1]), ms(profiled.at("step_s")[0]),
                  ms(profiled.at("step_s")[1]), time_name(explanation), ms(profiled.at("operators_s")[0]),
                  ms(profiled.at("operators_s")[1])),
      fmt::format("the operators leave {} unexplained: {} the bound of {:.3f} ms (the measured difference's interval "
                  "half-width, plus each of the two other distortions at the larger side's)",
                  signed_ms(r.at("unexplained_s")), r.at("within_bound").get<bool>() ? "within" : "OUTSIDE",
                  r.at("bound_s").get<double>() * 1e3)};
  return lines;
}

std::vector<std::string> compiler_lines(const json& explanation) {
  const auto& compiler = explanation.at("compiler");
  std::vector<std::string> lines;
  for (std::size_t s = 0; s < 2; ++s) {
    const auto& side = compiler.at("sides")[s];
    const std::string name = s == 0 ? "A" : "B";
    if (side.is_null()) {
      lines.push_back(name + ": not compiled");
      continue;
    }
    std::string phases;
    if (const auto& p = side.at("phases"); p.is_object()) {
      for (const char* phase : {"dynamo_seconds", "aot_autograd_seconds", "inductor_seconds"}) {
        if (!p.at(phase).is_null()) {
          phases +=
              fmt::format("{}{} {:.2f} s", phases.empty() ? " (" : ", ",
                          std::string(phase).substr(0, std::string(phase).find("_seconds")), p.at(phase).get<double>());
        }
      }
      if (!phases.empty()) phases += ")";
    }
    lines.push_back(fmt::format(
        "{}: {} graph(s), {} graph break(s), {} recompilation(s), compile {}{}", name, side.at("graphs").dump(),
        side.at("graph_breaks").dump(), side.at("recompilations").dump(),
        side.at("compile_s").is_null() ? std::string("-") : fmt::format("{:.2f} s", side.at("compile_s").get<double>()),
        phases));
  }
  for (const char* what : {"break_reasons", "fallback_operators"}) {
    for (const char* change : {"added", "removed"}) {
      for (const auto& item : compiler.at(what).at(change)) {
        lines.push_back(fmt::format("{} in B: {} {}", change,
                                    std::string(what) == "break_reasons" ? "graph break" : "fallback operator",
                                    item.get<std::string>()));
      }
    }
  }
  return lines;
}

std::string memory_line(const json& explanation) {
  const auto& memory = explanation.at("memory");
  return fmt::format("peak A {}, B {} ({}); warm-up peak A {}, B {}", mib(memory.at("peak_bytes")[0]),
                     mib(memory.at("peak_bytes")[1]), json_text(memory.at("fields")[1]),
                     mib(memory.at("warmup_peak_bytes")[0]), mib(memory.at("warmup_peak_bytes")[1]));
}

std::string trace_text(const json& trace) {
  if (!trace.value("stored", false)) return "no stored trace";
  if (!trace.contains("path")) return "sha256 " + trace.at("sha256").get<std::string>();
  return trace.at("path").get<std::string>() + (trace.value("present", false) ? "" : " (removed by torchsweep gc)");
}

std::string side_line(const json& side) {
  return fmt::format("{} ({}): {}; {} run(s), {} profiled, the newest {} attempt {} ({})",
                     side.at("side").get<std::string>(), side.at("spec").get<std::string>(),
                     configuration_text(side.at("configuration")), side.at("runs").get<int>(),
                     side.at("profiled_runs").get<int>(), side.at("profiled_run").at("job_id").get<std::string>(),
                     side.at("profiled_run").at("attempt").get<int>(), json_text(side.at("profiler")));
}

}  // namespace

std::string explanation_text(const json& explanation) {
  const auto& sides = explanation.at("sides");
  std::string text = "Why B differs from A\n";
  for (const auto& side : sides) text += "  " + side_line(side) + "\n";
  text += "\n" + timed_line(explanation) + "\n";
  text += fmt::format("\nOperators by their share of the difference ({} a step):\n", time_name(explanation));
  text += aligned(grid(explanation.at("operators"), "operator"));
  if (!explanation.at("kernels").empty()) {
    text += "\nGPU kernels (device time a step):\n" + aligned(grid(explanation.at("kernels"), "kernel"));
  }
  text += "\nReconciliation:\n";
  for (const auto& line : reconciliation_lines(explanation)) text += "  " + line + "\n";
  text += "\nCompiler:\n";
  for (const auto& line : compiler_lines(explanation)) text += "  " + line + "\n";
  text += "\nMemory: " + memory_line(explanation) + "\n";
  text += "\nTraces (open in ui.perfetto.dev or chrome://tracing):\n";
  for (const auto& side : sides) {
    text += "  " + side.at("side").get<std::string>() + ": " + trace_text(side.at("trace")) + "\n";
  }
  return text;
}

std::string explanation_markdown(const json& explanation) {
  const auto& sides = explanation.at("sides");
  std::string text = "### Why B differs from A\n\n";
  for (const auto& side : sides) text += "- **" + side_line(side) + "**\n";
  text += "\n" + timed_line(explanation) + "\n\n";
  text += fmt::format("**Operators** by their share of the difference ({} a step):\n\n", time_name(explanation));
  text += markdown_table(grid(explanation.at("operators"), "operator"));
  if (!explanation.at("kernels").empty()) {
    text += "\n**GPU kernels** (device time a step):\n\n" + markdown_table(grid(explanation.at("kernels"), "kernel"));
  }
  text += "\n**Reconciliation**\n\n";
  for (const auto& line : reconciliation_lines(explanation)) text += "- " + line + "\n";
  text += "\n**Compiler**\n\n";
  for (const auto& line : compiler_lines(explanation)) text += "- " + line + "\n";
  text += "\n**Memory**: " + memory_line(explanation) + "\n\n**Reproduce**\n\n";
  for (const auto& side : sides) {
    text += side.at("side").get<std::string>() + " (trace: " + trace_text(side.at("trace")) + "):\n\n";
    text += "```sh\n" +
            (side.at("reproduce").is_null() ? std::string("# the sweep document is not in the store")
                                            : side.at("reproduce").get<std::string>()) +
            "\n```\n\n";
  }
  return text;
}

}  // namespace ts::readers
