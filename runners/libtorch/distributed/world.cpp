#include "runners/libtorch/distributed/world.hpp"

#include <cstdlib>

namespace ts::worker {

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

}  // namespace ts::worker
