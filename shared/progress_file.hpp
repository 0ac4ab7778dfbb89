#pragma once
// The runner side of progress reporting (docs/worker.md): when the agent
// sets TORCHSWEEP_PROGRESS_FILE, a runner appends one JSON line per finished
// timed epoch, {"epoch": n, "epochs": total, "seconds": s}; the agent
// forwards them to the coordinator. Without the variable nothing happens.
#include <cstdint>
#include <fstream>
#include <optional>

namespace ts {

class ProgressFile {
 public:
  // Opens the file named by $TORCHSWEEP_PROGRESS_FILE, if set.
  ProgressFile();
  void epoch_finished(int64_t epoch, int64_t epochs, double seconds);

 private:
  std::optional<std::ofstream> out_;
};

}  // namespace ts
