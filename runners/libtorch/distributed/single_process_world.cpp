#include "runners/libtorch/distributed/single_process_world.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>

namespace ts::worker {

SingleProcessWorld::SingleProcessWorld() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) == 0) host_ = name.data();
}

void SingleProcessWorld::abort(int code) const { std::_Exit(code); }

}  // namespace ts::worker
