#include "shared/progress_file.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ts {

ProgressFile::ProgressFile() {
  if (const char* path = std::getenv("TORCHSWEEP_PROGRESS_FILE"); path != nullptr && *path != '\0') {
    out_.emplace(path, std::ios::app);
  }
}

void ProgressFile::epoch_finished(int64_t epoch, int64_t epochs, double seconds) {
  if (!out_ || !*out_) return;
  // One write and a flush per line, so the agent never reads half a line.
  *out_ << nlohmann::json{{"epoch", epoch}, {"epochs", epochs}, {"seconds", seconds}}.dump() + "\n" << std::flush;
}

}  // namespace ts
