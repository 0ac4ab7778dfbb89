#pragma once
// Where a user's torchsweep programs keep what they may remake but would
// rather not (the runners' probes, environments made for a bisection):
// $XDG_CACHE_HOME/torchsweep, else ~/.cache/torchsweep.
#include <filesystem>

namespace ts {

// The folder; empty without either variable (a bare daemon's environment).
std::filesystem::path user_cache_directory();

}  // namespace ts
