#include "runners/libtorch/loaded_libraries.hpp"

#include <link.h>

namespace ts::worker {

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        // The program itself has an empty name, the kernel's vDSO no file.
        if (info->dlpi_name && info->dlpi_name[0] == '/') {
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

}  // namespace ts::worker
