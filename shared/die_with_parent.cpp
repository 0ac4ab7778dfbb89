#include "shared/die_with_parent.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "shared/errors.hpp"
#include "shared/log.hpp"

namespace ts {

void die_with_parent_if_asked() {
  const char* asked = std::getenv("TORCHSWEEP_DIE_WITH_PARENT");
  if (asked == nullptr || std::string_view(asked) != "1") return;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    log::warn("cannot arm the parent-death signal; this process may outlive its agent");
    return;
  }
  // Orphaned before the signal was armed: adopted by init or a subreaper.
  if (::getppid() == 1) {
    log::error("started without a parent; exiting");
    std::exit(exit_code::internal_error);
  }
}

}  // namespace ts
