#pragma once
// This host's name (gethostname), as every C++ program of torchsweep reports
// it: the agent's hello and capabilities, the CLI's submitter, the LibTorch
// worker's result context and its ranks' host.
#include <string>

namespace ts {

// "unknown" when the system does not say.
std::string host_name();

}  // namespace ts
