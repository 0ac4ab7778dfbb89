# The header-only libraries the shared core and the worker need, from the
# folder scripts/gpu-node-bundle writes (TORCHSWEEP_HEADER_BUNDLE), as the
# targets their CMake packages would make: for a machine without their
# packages (a GPU node's image, docs/gpu.md). {fmt} and spdlog, which Debian
# builds as shared libraries, compile header-only from it.
set(bundle_include ${TORCHSWEEP_HEADER_BUNDLE}/include)
foreach(header nlohmann/json.hpp valijson/validator.hpp CLI/CLI.hpp fmt/format.h spdlog/spdlog.h)
  if(NOT EXISTS ${bundle_include}/${header})
    message(FATAL_ERROR "TORCHSWEEP_HEADER_BUNDLE=${TORCHSWEEP_HEADER_BUNDLE} lacks ${header}: "
                        "make the bundle with scripts/gpu-node-bundle")
  endif()
endforeach()
foreach(target nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt spdlog::spdlog)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${bundle_include})
endforeach()
set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
# Debian's spdlog/tweakme.h already asks for the external {fmt}.
set_target_properties(spdlog::spdlog PROPERTIES INTERFACE_COMPILE_DEFINITIONS SPDLOG_HEADER_ONLY=1
                                                INTERFACE_LINK_LIBRARIES fmt::fmt)
set(VALIJSON_INCLUDE_DIR ${bundle_include} CACHE PATH "valijson's headers" FORCE)
message(STATUS "header-only libraries from the bundle ${TORCHSWEEP_HEADER_BUNDLE}")
