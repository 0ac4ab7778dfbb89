// torchsweep judge: the agent's judgement of a runner's raw result
// (agent/judge/), for a runner run by hand: medians, throughput, noise,
// warm-up, input-bound and efficiency, exactly as an agent adds them, and
// the profile's summary of a trace beside the result (agent/trace_summary.hpp).
#include <filesystem>
#include <iostream>

#include "agent/judge/judge.hpp"
#include "agent/trace_summary.hpp"
#include "cli/commands.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/schema.hpp"

namespace ts::cli {

Command add_judge_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "judge",
      "judge a runner's raw result document as an agent does (e.g. torchsweep-worker ... --out - | "
      "torchsweep judge -); prints the judged document. A profile's trace is read beside FILE (for -, in the "
      "current directory), where the runner wrote it");
  auto result = std::make_shared<std::string>();
  command->add_option("result", *result, "the result document (FILE, or - for stdin)")->required();
  return [result] {
    auto document = json_io::read(*result);  // "-": stdin
    static const schema::Validator validator("result.schema.json");
    if (const auto problems = validator.problems(document); !problems.empty()) {
      throw InvalidInput(problems.front().field, problems.front().expected, *result);
    }
    agent::summarize_trace(
        document, *result == "-" ? std::filesystem::current_path() : std::filesystem::absolute(*result).parent_path());
    // No agent here: no measured peak (MFU stays null), no assigned GPUs.
    agent::judge(document, {});
    std::cout << document.dump(2) << "\n";
    return exit_code::ok;
  };
}

}  // namespace ts::cli
