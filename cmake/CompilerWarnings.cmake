# ts_project_target(TARGET): the warning set and include root every project
# target shares. Sources include each other as "shared/log.hpp",
# "runners/libtorch/job.hpp": the path shows the architecture.
function(ts_project_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Woverloaded-virtual)
  if(TORCHSWEEP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
endfunction()
