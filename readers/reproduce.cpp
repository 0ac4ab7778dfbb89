#include "readers/reproduce.hpp"

#include <vector>

namespace ts::readers {
namespace {

// The axes of configuration_axes() a sweep document has as axes (device_name is the node's).
const std::vector<std::string> sweep_axes{"model", "task",   "batch_size", "precision", "mode",
                                          "gpus",  "runner", "env",        "data"};

}  // namespace

std::string reproduce_command(const nlohmann::json& spec, const nlohmann::json& configuration) {
  auto narrowed = spec;
  narrowed["name"] = spec.value("name", std::string("sweep")) + "-repro";
  narrowed.erase("tags");  // a rerun by hand is no night of the history
  for (const auto& axis : sweep_axes) {
    if (narrowed.contains("axes") && narrowed["axes"].contains(axis) && configuration.contains(axis)) {
      narrowed["axes"][axis] = nlohmann::json::array({configuration.at(axis)});
    }
  }
  std::string quoted;
  for (const char c : narrowed.dump()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return "printf '%s\\n' '" + quoted + "' > repro.json && torchsweep run repro.json";
}

}  // namespace ts::readers
