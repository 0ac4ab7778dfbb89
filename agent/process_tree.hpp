#pragma once
// The processes a runner started, wherever their process group. mpirun puts
// each rank in a process group of its own, so killing the runner's group
// does not reach them; the executor therefore remembers every descendant it
// sees and kills those too.
#include <sys/types.h>

#include <cstdint>
#include <map>

namespace ts::agent {

class ProcessTree {
 public:
  // `scan`: whether descendants may leave the root's process group (a
  // launcher such as mpirun); otherwise the group reaches them all and
  // observe() skips the /proc scan.
  ProcessTree(pid_t root, bool scan) : root_(root), scan_(scan) {}
  // Records the root's current descendants (found through /proc).
  void observe();
  // Sends `signal` to the root's process group and to every descendant seen
  // that is still the same process (same start time: a recycled pid is left
  // alone).
  void signal_all(int signal);

 private:
  pid_t root_;
  bool scan_;
  std::map<pid_t, uint64_t> seen_;  // pid -> start time in clock ticks since boot
};

}  // namespace ts::agent
