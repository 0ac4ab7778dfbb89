#include "shared/progress_file.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "shared/runner_contract.hpp"

namespace ts {

ProgressFile::ProgressFile() {
  if (const char* path = std::getenv(std::string(runner_contract::progress_variable).c_str());
      path != nullptr && *path != '\0') {
    out_.emplace(path, std::ios::app);
  }
}

void ProgressFile::epoch_finished(int64_t epoch, int64_t epochs, double seconds) {
  if (!out_ || !*out_) return;
  // One write and a flush per line, so the agent never reads half a line.
  *out_ << nlohmann::json{{runner_contract::progress_epoch, epoch},
                          {runner_contract::progress_epochs, epochs},
                          {runner_contract::progress_seconds, seconds}}
                   .dump() +
               "\n"
        << std::flush;
}

}  // namespace ts
