// torchsweep-worker: the LibTorch runner of the worker contract
//   torchsweep-worker --job job.json|- --out result.json|-
// Phases: parse the command line, validate the job, run it, write the result.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "runners/libtorch/cli_options.hpp"
#include "runners/libtorch/compat.hpp"
#include "runners/libtorch/device.hpp"
#include "runners/libtorch/distributed/single_process_world.hpp"
#ifdef TORCHSWEEP_WITH_MPI
#include "runners/libtorch/distributed/mpi_world.hpp"
#endif
#include "runners/libtorch/experiment.hpp"
#include "runners/libtorch/job.hpp"
#include "runners/libtorch/loaded_libraries.hpp"
#include "runners/libtorch/models/registry.hpp"
#include "runners/libtorch/peak_probe.hpp"
#include "runners/libtorch/start_state.hpp"
#include "shared/die_with_parent.hpp"
#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "shared/log.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/schema.hpp"
#include "shared/version.hpp"

namespace {

void list_models() {
  std::printf("%-12s %14s  %s\n", "model", "parameters", "description (defaults)");
  for (const auto& info : ts::worker::models()) {
    auto model = info.build(info.defaults);
    std::printf("%-12s %14lld  %s\n", info.name.c_str(),
                static_cast<long long>(ts::worker::count_parameters(*model.module)), info.description.c_str());
  }
  // The libraries whose models it runs (the sweep's check accepts LIBRARY:NAME for them).
  for (const auto& [library, spec] : ts::models::libraries()) {
    if (std::find(spec.runners.begin(), spec.runners.end(), "libtorch") == spec.runners.end()) continue;
    std::printf("%-12s %14s  %s\n", spec.name.c_str(), "-", spec.description.c_str());
  }
}

int run(const ts::worker::WorkerCommand& command) {
  ts::die_with_parent_if_asked();  // a rank ends with mpirun, as mpirun with the agent
  // Under mpirun every rank runs this; rank 0 writes the job's result.
  std::unique_ptr<ts::worker::World> world;
  if (ts::worker::launched_by_mpirun()) {
#ifdef TORCHSWEEP_WITH_MPI
    world = std::make_unique<ts::worker::MpiWorld>();
#else
    throw ts::InvalidInput("gpus",
                           "mpirun started this worker, which was built without MPI (TORCHSWEEP_WITH_MPI=OFF): "
                           "it runs one-rank jobs only");
#endif
  }
  const auto job = ts::worker::parse_job(command.job);
  if (!world && job.data_parallel == "always") world = std::make_unique<ts::worker::SingleProcessWorld>();
  ts::log::info("running {} {} {} {} batch {} on {}", job.model, nlohmann::json(job.task).get<std::string>(),
                nlohmann::json(job.mode).get<std::string>(), nlohmann::json(job.precision).get<std::string>(),
                job.batch_size, job.device);
  // A profile's trace goes beside the result (the agent ships it from the job's directory).
  const auto beside_result =
      command.out == "-" ? std::filesystem::current_path() : std::filesystem::absolute(command.out).parent_path();
  const auto result = ts::worker::run_experiment(job, world.get(), ts::worker::capture_torchscript, beside_result);
  const int code = result.status == ts::worker::Status::ok ? ts::exit_code::ok : ts::exit_code::run_failed;
  if (!world || world->rank() == 0) {
    auto document = ts::worker::to_json(result);
    // Our own output crosses a boundary too: a result that breaks its schema
    // is a bug, reported as such rather than handed to the store.
    static const ts::schema::Validator result_schema("result.schema.json");
    result_schema.validate(document);
    ts::json_io::write_atomically(command.out, document);
  }
  if (result.ranks_diverged) {
    ts::log::error("rank {} failed while the ranks were communicating; ending every rank", world->rank());
    world->abort(code);
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  ts::log::set_program("worker");
  ts::worker::WorkerCommand command;
  try {
    command = ts::worker::parse_command_line(argc, argv);
    if (command.exit_now) return *command.exit_now;
    ts::log::set_level(ts::log::parse_level(command.log_level));
  } catch (const ts::InvalidInput& error) {
    ts::log::error("invalid arguments: {}", error.what());
    return ts::exit_code::invalid_input;
  }
  try {
    switch (command.action) {
      case ts::worker::WorkerCommand::Action::list_models:
        list_models();
        return ts::exit_code::ok;
      case ts::worker::WorkerCommand::Action::show_version: {
        std::cout << "torchsweep-worker " << ts::version::number() << " (" << ts::version::commit() << ")\n";
        // Read by agents for their capabilities (agent/node/capabilities.cpp).
        const auto cuda = ts::worker::gpu_context().at("cuda_version");
        std::cout << "torch " << ts::worker::compat::torch_version() << " cuda "
                  << (cuda.is_string() ? cuda.get<std::string>() : std::string("none")) << "\n";
        // What it runs (fp16 on CUDA only; graph is the tensorflow runner's).
        std::cout << "modes eager compiled\nprecisions fp32 bf16 fp16\ntasks train infer generate\n";
        // The libraries its answers depend on, as a Python runner names its sys.path: the agent keeps them.
        std::cout << "site " << nlohmann::json(ts::worker::loaded_libraries()).dump() << "\n";
        return ts::exit_code::ok;
      }
      case ts::worker::WorkerCommand::Action::probe_peak:
        ts::json_io::write_atomically(command.out, ts::worker::probe_peak());
        return ts::exit_code::ok;
      case ts::worker::WorkerCommand::Action::write_start: {
        const auto job = ts::worker::parse_job(command.job);
        if (command.initial_weights_out) ts::worker::write_initial_weights(job, *command.initial_weights_out);
        if (command.reference_batch_out) ts::worker::write_reference_batch(job, *command.reference_batch_out);
        return ts::exit_code::ok;
      }
      case ts::worker::WorkerCommand::Action::run:
        return run(command);
    }
  } catch (const ts::InvalidInput& error) {
    ts::log::error("invalid job: {}", error.what());
    return ts::exit_code::invalid_input;
  } catch (const std::exception& error) {
    ts::log::error("internal error: {}", error.what());
    return ts::exit_code::internal_error;
  }
  return ts::exit_code::internal_error;
}
