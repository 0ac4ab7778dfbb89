# ts_project_target(TARGET): the warning set and include root every project
# target shares. Sources include each other as "shared/log.hpp",
# "runners/libtorch/job.hpp": the path shows the architecture.
function(ts_project_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Woverloaded-virtual)
  if(TORCHSWEEP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # GCC 12's -Wrestrict misfires inside libstdc++'s own std::string at -O2
  # and above (GCC bug 105329, fixed in 13): the worker's build on a GPU
  # node's GCC 12 would fail with -Werror on code that is not ours.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  # Line tables only (the last -g wins over RelWithDebInfo's -g): stack traces, sanitizer reports and
  # profilers still name file and line, and a cold build takes a quarter less (LibTorch's templates).
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
endfunction()
