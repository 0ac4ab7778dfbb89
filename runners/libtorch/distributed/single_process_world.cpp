#include "runners/libtorch/distributed/single_process_world.hpp"

#include <cstdlib>

#include "shared/host_name.hpp"

namespace ts::worker {

SingleProcessWorld::SingleProcessWorld() : host_(host_name()) {}

void SingleProcessWorld::abort(int code) const { std::_Exit(code); }

}  // namespace ts::worker
