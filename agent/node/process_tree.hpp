#pragma once
// The processes a runner started, wherever their process group. mpirun puts
// each rank in a process group of its own, so killing the runner's group
// does not reach them; the executor therefore remembers every descendant it
// sees and kills those too.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>

namespace ts::agent {

class ProcessTree {
 public:
  // `scan`: whether descendants may leave the root's process group (a
  // launcher such as mpirun); otherwise the group reaches them all and
  // observe() skips the /proc scan.
  ProcessTree(pid_t root, bool scan);
  // Records the root's current descendants (found through /proc); returns
  // whether any was new.
  bool observe();
  // Sends `signal` to the root's process group and to every descendant seen
  // that is still the same process (same start time: a recycled pid is left
  // alone).
  void signal_all(int signal);

  // Writes the root and every descendant seen, with their start times, so
  // that the agent's next life can kill what this one left (kill_recorded).
  void save(const std::filesystem::path& file) const;
  // SIGKILLs what a saved tree still has alive (same pid and start time;
  // the root's process group when the root itself lives); returns how many
  // processes it signalled. A file that cannot be read kills nothing.
  static std::size_t kill_recorded(const std::filesystem::path& file);
  // Whether `ancestor` started `pid`, directly or through its children.
  static bool descends_from(pid_t pid, pid_t ancestor);

 private:
  pid_t root_;
  uint64_t root_start_time_ = 0;
  bool scan_;
  std::map<pid_t, uint64_t> seen_;  // pid -> start time in clock ticks since boot
};

}  // namespace ts::agent
