#pragma once
// Programs installed together (torchsweep, its runners, torchsweep-parquet)
// find each other in the folder of the running executable, wherever that
// was installed.
#include <filesystem>
#include <string_view>

namespace ts {

// `file` in the folder of the running executable (/proc/self/exe); an
// empty path when that cannot be read. Whether the file exists is the
// caller's question.
std::filesystem::path beside_this_program(std::string_view file);

}  // namespace ts
