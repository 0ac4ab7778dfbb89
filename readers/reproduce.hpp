#pragma once
// The command that reproduces one configuration (the report's, explain's):
// `torchsweep run` of the sweep document that ran it, its axes narrowed to
// the configuration's values.
#include <nlohmann/json.hpp>
#include <string>

namespace ts::readers {

// `spec`: the sweep document; `configuration`: an object of axis values
// (model, mode, ...), as a result row has them.
std::string reproduce_command(const nlohmann::json& spec, const nlohmann::json& configuration);

}  // namespace ts::readers
