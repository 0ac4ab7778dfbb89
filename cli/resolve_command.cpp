// torchsweep resolve: a job document resolved as an agent resolves it
// before its runner sees it (shared/job_resolution.hpp), for a runner run
// by hand; the Python runners ask it for a job nobody resolved. An invalid
// job exits 2 with {"invalid": {"field", "problem"}} on stdout.
#include <iostream>

#include "cli/commands.hpp"
#include "shared/errors.hpp"
#include "shared/job_resolution.hpp"
#include "shared/json_io.hpp"

namespace ts::cli {

Command add_resolve_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "resolve",
      "resolve a job document as an agent does before its runner sees it (every default, the model's knobs, "
      "iters, threads); prints the resolved job");
  auto job = std::make_shared<std::string>();
  auto runner = std::make_shared<std::string>("libtorch");
  command->add_option("job", *job, "the job document (FILE, or - for stdin)")->required();
  command->add_option("--runner", *runner, "the runner that will run it")->capture_default_str();
  auto cores = std::make_shared<int64_t>(job_resolution::cores_available());
  command
      ->add_option("--cores", *cores, "the cores of the node that will run it (default: those this process may run on)")
      ->check(CLI::PositiveNumber);
  return [job, runner, cores] {
    const auto document = json_io::read(*job);  // "-": stdin
    try {
      std::cout << job_resolution::resolve(document, {*runner, *cores}).dump(2) << "\n";
    } catch (const InvalidInput& error) {
      // Said to the reader too, for a Python runner to raise as its own (docs/worker.md).
      std::cout << nlohmann::json{{"invalid", {{"field", error.field()}, {"problem", error.problem()}}}}.dump() << "\n";
      throw;
    }
    return exit_code::ok;
  };
}

}  // namespace ts::cli
