#pragma once
// The shared libraries this process loaded, by path: what the worker's
// answers to --version and --list-models depend on beside its own file, so
// the agent keeps them until one of these files changes (an apt upgrade of
// LibTorch replaces them; agent/node/probe_cache.hpp).
#include <string>
#include <vector>

namespace ts::worker {

std::vector<std::string> loaded_libraries();

}  // namespace ts::worker
